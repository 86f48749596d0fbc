// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AuthCaptureEscrow} from "./AuthCaptureEscrow.sol";
import {TokenCollector} from "./TokenCollector.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

/// Collects a refund from the operator's own balance: the operator lets this collector take it
/// (an ERC-20 allowance), and the escrow forwards it to the payer.
contract OperatorRefundCollector is TokenCollector {
    CollectorType public constant override collectorType = CollectorType.Refund;

    constructor(address authCaptureEscrow_) TokenCollector(authCaptureEscrow_) {}

    function _collectTokens(AuthCaptureEscrow.PaymentInfo calldata paymentInfo, address tokenStore, uint256 amount, bytes calldata)
        internal
        override
    {
        SafeTransfer.transferFrom(paymentInfo.token, paymentInfo.operator, tokenStore, amount);
    }
}
