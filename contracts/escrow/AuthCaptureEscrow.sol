// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {TokenStore} from "./TokenStore.sol";
import {TokenCollector} from "./TokenCollector.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
}

/// authcap's own escrow with the external interface of Commerce Payments' `AuthCaptureEscrow`
/// (base/commerce-payments v1.0): the same `PaymentInfo` struct and type hash, functions, events and
/// errors, so the code that drives the deployed contract on Base drives this one on a dev chain.
/// A payment is authorized once (funds into the operator's token store), captured in any number of
/// parts until `authorizationExpiry`, voided by the operator or reclaimed by the payer after it, and
/// refunded up to what was captured until `refundExpiry`. Only the payment's operator moves funds;
/// only the payer reclaims. docs/chain.md says what was taken from the reference and what was not.
contract AuthCaptureEscrow {
    struct PaymentInfo {
        address operator;
        address payer;
        address receiver;
        address token;
        uint120 maxAmount;
        uint48 preApprovalExpiry;
        uint48 authorizationExpiry;
        uint48 refundExpiry;
        uint16 minFeeBps;
        uint16 maxFeeBps;
        address feeReceiver;
        uint256 salt;
    }

    struct PaymentState {
        bool hasCollectedPayment;
        uint120 capturableAmount;
        uint120 refundableAmount;
    }

    bytes32 public constant PAYMENT_INFO_TYPEHASH = keccak256(
        "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)"
    );

    uint16 internal constant _MAX_FEE_BPS = 10_000;

    address public immutable tokenStoreImplementation;

    mapping(bytes32 paymentInfoHash => PaymentState state) public paymentState;

    event PaymentCharged(
        bytes32 indexed paymentInfoHash,
        PaymentInfo paymentInfo,
        uint256 amount,
        address tokenCollector,
        uint16 feeBps,
        address feeReceiver
    );
    event PaymentAuthorized(bytes32 indexed paymentInfoHash, PaymentInfo paymentInfo, uint256 amount, address tokenCollector);
    event PaymentCaptured(bytes32 indexed paymentInfoHash, uint256 amount, uint16 feeBps, address feeReceiver);
    event PaymentVoided(bytes32 indexed paymentInfoHash, uint256 amount);
    event PaymentReclaimed(bytes32 indexed paymentInfoHash, uint256 amount);
    event PaymentRefunded(bytes32 indexed paymentInfoHash, uint256 amount, address tokenCollector);
    event TokenStoreCreated(address indexed operator, address tokenStore);

    error InvalidSender(address sender, address expected);
    error ZeroAmount();
    error AmountOverflow(uint256 amount, uint256 limit);
    error ExceedsMaxAmount(uint256 amount, uint256 maxAmount);
    error AfterPreApprovalExpiry(uint48 timestamp, uint48 expiry);
    error InvalidExpiries(uint48 preApproval, uint48 authorization, uint48 refund);
    error FeeBpsOverflow(uint16 feeBps);
    error InvalidFeeBpsRange(uint16 minFeeBps, uint16 maxFeeBps);
    error FeeBpsOutOfRange(uint16 feeBps, uint16 minFeeBps, uint16 maxFeeBps);
    error ZeroFeeReceiver();
    error InvalidFeeReceiver(address attempted, address expected);
    error InvalidCollectorForOperation();
    error TokenCollectionFailed();
    error PaymentAlreadyCollected(bytes32 paymentInfoHash);
    error AfterAuthorizationExpiry(uint48 timestamp, uint48 expiry);
    error InsufficientAuthorization(bytes32 paymentInfoHash, uint256 authorizedAmount, uint256 requestedAmount);
    error ZeroAuthorization(bytes32 paymentInfoHash);
    error BeforeAuthorizationExpiry(uint48 timestamp, uint48 expiry);
    error AfterRefundExpiry(uint48 timestamp, uint48 expiry);
    error RefundExceedsCapture(uint256 refund, uint256 captured);
    /// A call re-entered the escrow (a token or collector calling back): the reference's guard says `Reentrancy()`.
    error Reentrancy();

    // Transient (EIP-1153) so the guard costs no storage write and clears itself with the transaction.
    uint256 private constant _REENTRANCY_SLOT = uint256(keccak256("authcap.AuthCaptureEscrow.reentrancy")) - 1;

    modifier nonReentrant() {
        uint256 slot = _REENTRANCY_SLOT;
        bool entered;
        assembly ("memory-safe") {
            entered := tload(slot)
        }
        if (entered) revert Reentrancy();
        assembly ("memory-safe") {
            tstore(slot, 1)
        }
        _;
        assembly ("memory-safe") {
            tstore(slot, 0)
        }
    }

    modifier onlySender(address sender) {
        if (msg.sender != sender) revert InvalidSender(msg.sender, sender);
        _;
    }

    modifier validAmount(uint256 amount) {
        if (amount == 0) revert ZeroAmount();
        if (amount > type(uint120).max) revert AmountOverflow(amount, type(uint120).max);
        _;
    }

    constructor() {
        tokenStoreImplementation = address(new TokenStore(address(this)));
    }

    /// Authorizes and captures in one step: the payment is refundable at once, nothing is held.
    function charge(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData,
        uint16 feeBps,
        address feeReceiver
    ) external nonReentrant onlySender(paymentInfo.operator) validAmount(amount) {
        _validatePayment(paymentInfo, amount);
        _validateFee(paymentInfo, feeBps, feeReceiver);
        bytes32 paymentInfoHash = _collectOnce(paymentInfo);
        paymentState[paymentInfoHash] = PaymentState(true, 0, uint120(amount));
        emit PaymentCharged(paymentInfoHash, paymentInfo, amount, tokenCollector, feeBps, feeReceiver);
        _collectTokens(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Payment);
        _distributeTokens(paymentInfo.token, paymentInfo.receiver, amount, feeBps, feeReceiver);
    }

    /// Holds `amount` of the payer's tokens in the operator's token store.
    function authorize(PaymentInfo calldata paymentInfo, uint256 amount, address tokenCollector, bytes calldata collectorData)
        external
        nonReentrant
        onlySender(paymentInfo.operator)
        validAmount(amount)
    {
        _validatePayment(paymentInfo, amount);
        bytes32 paymentInfoHash = _collectOnce(paymentInfo);
        paymentState[paymentInfoHash] = PaymentState(true, uint120(amount), 0);
        emit PaymentAuthorized(paymentInfoHash, paymentInfo, amount, tokenCollector);
        _collectTokens(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Payment);
    }

    /// Pays the receiver (less the fee) part of what is held; again and again, until `authorizationExpiry`.
    function capture(PaymentInfo calldata paymentInfo, uint256 amount, uint16 feeBps, address feeReceiver)
        external
        nonReentrant
        onlySender(paymentInfo.operator)
        validAmount(amount)
    {
        _validateFee(paymentInfo, feeBps, feeReceiver);
        if (block.timestamp >= paymentInfo.authorizationExpiry) {
            revert AfterAuthorizationExpiry(uint48(block.timestamp), paymentInfo.authorizationExpiry);
        }
        bytes32 paymentInfoHash = getHash(paymentInfo);
        PaymentState memory state = paymentState[paymentInfoHash];
        if (state.capturableAmount < amount) revert InsufficientAuthorization(paymentInfoHash, state.capturableAmount, amount);
        state.capturableAmount -= uint120(amount);
        state.refundableAmount += uint120(amount);
        paymentState[paymentInfoHash] = state;
        emit PaymentCaptured(paymentInfoHash, amount, feeBps, feeReceiver);
        _distributeTokens(paymentInfo.token, paymentInfo.receiver, amount, feeBps, feeReceiver);
    }

    /// Returns everything still held to the payer; the operator may do it at any time.
    function void(PaymentInfo calldata paymentInfo) external nonReentrant onlySender(paymentInfo.operator) {
        (bytes32 paymentInfoHash, uint256 held) = _release(paymentInfo);
        emit PaymentVoided(paymentInfoHash, held);
        _sendTokens(paymentInfo.operator, paymentInfo.token, paymentInfo.payer, held);
    }

    /// The payer's own way back to what is still held, from `authorizationExpiry` on.
    function reclaim(PaymentInfo calldata paymentInfo) external nonReentrant onlySender(paymentInfo.payer) {
        if (block.timestamp < paymentInfo.authorizationExpiry) {
            revert BeforeAuthorizationExpiry(uint48(block.timestamp), paymentInfo.authorizationExpiry);
        }
        (bytes32 paymentInfoHash, uint256 held) = _release(paymentInfo);
        emit PaymentReclaimed(paymentInfoHash, held);
        _sendTokens(paymentInfo.operator, paymentInfo.token, paymentInfo.payer, held);
    }

    /// Gives captured funds back to the payer, collected through a refund collector, until `refundExpiry`.
    function refund(PaymentInfo calldata paymentInfo, uint256 amount, address tokenCollector, bytes calldata collectorData)
        external
        nonReentrant
        onlySender(paymentInfo.operator)
        validAmount(amount)
    {
        if (block.timestamp >= paymentInfo.refundExpiry) revert AfterRefundExpiry(uint48(block.timestamp), paymentInfo.refundExpiry);
        bytes32 paymentInfoHash = getHash(paymentInfo);
        uint120 captured = paymentState[paymentInfoHash].refundableAmount;
        if (captured < amount) revert RefundExceedsCapture(amount, captured);
        paymentState[paymentInfoHash].refundableAmount = captured - uint120(amount);
        emit PaymentRefunded(paymentInfoHash, amount, tokenCollector);
        _collectTokens(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Refund);
        _sendTokens(paymentInfo.operator, paymentInfo.token, paymentInfo.payer, amount);
    }

    /// The payment's identity on this chain and this escrow: its terms' EIP-712 struct hash, then the chain id and address.
    function getHash(PaymentInfo memory paymentInfo) public view returns (bytes32) {
        bytes32 paymentInfoHash = keccak256(abi.encode(PAYMENT_INFO_TYPEHASH, paymentInfo));
        return keccak256(abi.encode(block.chainid, address(this), paymentInfoHash));
    }

    /// Where an operator's held tokens are, deployed or not yet: the CREATE2 address of its clone.
    function getTokenStore(address operator) public view returns (address) {
        bytes32 initCodeHash = keccak256(_cloneInitCode(tokenStoreImplementation));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), _storeSalt(operator), initCodeHash)))));
    }

    function _collectOnce(PaymentInfo calldata paymentInfo) internal view returns (bytes32 paymentInfoHash) {
        paymentInfoHash = getHash(paymentInfo);
        if (paymentState[paymentInfoHash].hasCollectedPayment) revert PaymentAlreadyCollected(paymentInfoHash);
    }

    function _release(PaymentInfo calldata paymentInfo) internal returns (bytes32 paymentInfoHash, uint256 held) {
        paymentInfoHash = getHash(paymentInfo);
        held = paymentState[paymentInfoHash].capturableAmount;
        if (held == 0) revert ZeroAuthorization(paymentInfoHash);
        paymentState[paymentInfoHash].capturableAmount = 0;
    }

    /// Whatever the collector does, the operator's store must have grown by exactly `amount`.
    function _collectTokens(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData,
        TokenCollector.CollectorType collectorType
    ) internal {
        if (TokenCollector(tokenCollector).collectorType() != collectorType) revert InvalidCollectorForOperation();
        address tokenStore = getTokenStore(paymentInfo.operator);
        uint256 before = IERC20Balance(paymentInfo.token).balanceOf(tokenStore);
        TokenCollector(tokenCollector).collectTokens(paymentInfo, tokenStore, amount, collectorData);
        if (IERC20Balance(paymentInfo.token).balanceOf(tokenStore) != before + amount) revert TokenCollectionFailed();
    }

    /// Sends from the operator's store, creating the store the first time it is needed.
    function _sendTokens(address operator, address token, address recipient, uint256 amount) internal {
        address tokenStore = getTokenStore(operator);
        if (tokenStore.code.length == 0) {
            bytes memory initCode = _cloneInitCode(tokenStoreImplementation);
            bytes32 salt = _storeSalt(operator);
            assembly ("memory-safe") {
                tokenStore := create2(0, add(initCode, 32), mload(initCode), salt)
            }
            if (tokenStore == address(0)) revert TokenCollectionFailed();
            emit TokenStoreCreated(operator, tokenStore);
        }
        TokenStore(tokenStore).sendTokens(token, recipient, amount);
    }

    function _distributeTokens(address token, address receiver, uint256 amount, uint16 feeBps, address feeReceiver) internal {
        uint256 feeAmount = amount * feeBps / _MAX_FEE_BPS;
        if (feeAmount > 0) _sendTokens(msg.sender, token, feeReceiver, feeAmount);
        if (amount > feeAmount) _sendTokens(msg.sender, token, receiver, amount - feeAmount);
    }

    function _validatePayment(PaymentInfo calldata paymentInfo, uint256 amount) internal view {
        if (amount > paymentInfo.maxAmount) revert ExceedsMaxAmount(amount, paymentInfo.maxAmount);
        uint48 now_ = uint48(block.timestamp);
        if (now_ >= paymentInfo.preApprovalExpiry) revert AfterPreApprovalExpiry(now_, paymentInfo.preApprovalExpiry);
        if (paymentInfo.preApprovalExpiry > paymentInfo.authorizationExpiry || paymentInfo.authorizationExpiry > paymentInfo.refundExpiry) {
            revert InvalidExpiries(paymentInfo.preApprovalExpiry, paymentInfo.authorizationExpiry, paymentInfo.refundExpiry);
        }
        if (paymentInfo.maxFeeBps > _MAX_FEE_BPS) revert FeeBpsOverflow(paymentInfo.maxFeeBps);
        if (paymentInfo.minFeeBps > paymentInfo.maxFeeBps) revert InvalidFeeBpsRange(paymentInfo.minFeeBps, paymentInfo.maxFeeBps);
    }

    /// The fee is within the payment's range, goes somewhere when there is one, and to the payment's fee receiver when it names one.
    function _validateFee(PaymentInfo calldata paymentInfo, uint16 feeBps, address feeReceiver) internal pure {
        if (feeBps < paymentInfo.minFeeBps || feeBps > paymentInfo.maxFeeBps) {
            revert FeeBpsOutOfRange(feeBps, paymentInfo.minFeeBps, paymentInfo.maxFeeBps);
        }
        if (feeReceiver == address(0) && feeBps > 0) revert ZeroFeeReceiver();
        if (paymentInfo.feeReceiver != address(0) && paymentInfo.feeReceiver != feeReceiver) {
            revert InvalidFeeReceiver(feeReceiver, paymentInfo.feeReceiver);
        }
    }

    function _storeSalt(address operator) internal pure returns (bytes32) {
        return bytes32(bytes20(operator));
    }

    /// EIP-1167's minimal proxy creation code for `implementation`.
    function _cloneInitCode(address implementation) internal pure returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73", implementation, hex"5af43d82803e903d91602b57fd5bf3"
        );
    }
}
