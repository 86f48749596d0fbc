// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AuthCaptureEscrow} from "./AuthCaptureEscrow.sol";
import {TokenCollector} from "./TokenCollector.sol";
import {IERC3009} from "./IERC3009.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

interface IMulticall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory);
}

/// Collects a payment with the payer's EIP-3009 `ReceiveWithAuthorization`, signed to this
/// collector for the payment's `maxAmount`, valid from 0 until `preApprovalExpiry`, its nonce the
/// payer-agnostic payment hash. What is not authorized now goes straight back to the payer.
contract ERC3009PaymentCollector is TokenCollector {
    CollectorType public constant override collectorType = CollectorType.Payment;

    /// ERC-6492's suffix: a signature from a smart wallet not deployed yet, with its deployment call.
    bytes32 internal constant _ERC6492_MAGIC_VALUE = 0x6492649264926492649264926492649264926492649264926492649264926492;

    /// Where a wrapped signature's deployment call is made from (a neutral contract, never this one).
    /// The zero address: wrapped signatures are unwrapped, and their deployment is not attempted.
    IMulticall3 public immutable multicall3;

    constructor(address authCaptureEscrow_, address multicall3_) TokenCollector(authCaptureEscrow_) {
        multicall3 = IMulticall3(multicall3_);
    }

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) internal override {
        address token = paymentInfo.token;
        uint256 maxAmount = paymentInfo.maxAmount;
        IERC3009(token).receiveWithAuthorization(
            paymentInfo.payer,
            address(this),
            maxAmount,
            0,
            paymentInfo.preApprovalExpiry,
            _getHashPayerAgnostic(paymentInfo),
            _unwrapSignature(collectorData)
        );
        if (maxAmount > amount) SafeTransfer.transfer(token, paymentInfo.payer, maxAmount - amount);
        SafeTransfer.transfer(token, tokenStore, amount);
    }

    /// An ERC-6492 signature `abi.encode(target, data, signature) ++ magic` has its wallet deployed
    /// (best effort: it may already be) and yields the inner signature; any other passes through.
    function _unwrapSignature(bytes memory signature) internal returns (bytes memory) {
        uint256 length = signature.length;
        if (length < 32) return signature;
        bytes32 suffix;
        assembly ("memory-safe") {
            suffix := mload(add(add(signature, 32), sub(length, 32)))
        }
        if (suffix != _ERC6492_MAGIC_VALUE) return signature;
        // Drop the suffix in place: the length word shrinks by 32.
        assembly ("memory-safe") {
            mstore(signature, sub(length, 32))
        }
        (address target, bytes memory data, bytes memory inner) = abi.decode(signature, (address, bytes, bytes));
        if (address(multicall3) != address(0)) {
            IMulticall3.Call[] memory calls = new IMulticall3.Call[](1);
            calls[0] = IMulticall3.Call(target, data);
            multicall3.tryAggregate(false, calls);
        }
        return inner;
    }
}
