// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AuthCaptureEscrow} from "./AuthCaptureEscrow.sol";

/// Brings tokens into an operator's token store for the escrow: from the payer for a payment, from
/// the operator (or elsewhere) for a refund. The escrow checks the store's balance moved by exactly
/// the amount, whatever the collector does.
abstract contract TokenCollector {
    enum CollectorType {
        Payment,
        Refund
    }

    AuthCaptureEscrow public immutable authCaptureEscrow;

    error OnlyAuthCaptureEscrow();

    constructor(address authCaptureEscrow_) {
        authCaptureEscrow = AuthCaptureEscrow(authCaptureEscrow_);
    }

    function collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) external {
        if (msg.sender != address(authCaptureEscrow)) revert OnlyAuthCaptureEscrow();
        _collectTokens(paymentInfo, tokenStore, amount, collectorData);
    }

    function collectorType() external view virtual returns (CollectorType);

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) internal virtual;

    /// The payment's hash with the payer left out: the payer's EIP-3009 nonce. The token binds the
    /// payer itself (`from`); every other term is in the nonce, so none can change after signing.
    function _getHashPayerAgnostic(AuthCaptureEscrow.PaymentInfo memory paymentInfo) internal view returns (bytes32) {
        address payer = paymentInfo.payer;
        paymentInfo.payer = address(0);
        bytes32 hash = authCaptureEscrow.getHash(paymentInfo);
        paymentInfo.payer = payer;
        return hash;
    }
}
