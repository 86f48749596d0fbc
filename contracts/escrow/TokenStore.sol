// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {SafeTransfer} from "./SafeTransfer.sol";

/// Holds one operator's escrowed tokens, apart from every other operator's. Deployed once as an
/// implementation; each operator gets an EIP-1167 clone of it at a CREATE2 address the escrow can
/// name before it exists (AuthCaptureEscrow.getTokenStore).
contract TokenStore {
    address public immutable authCaptureEscrow;

    error OnlyAuthCaptureEscrow();

    constructor(address authCaptureEscrow_) {
        authCaptureEscrow = authCaptureEscrow_;
    }

    /// Only the escrow moves a store's tokens.
    function sendTokens(address token, address recipient, uint256 amount) external returns (bool) {
        if (msg.sender != authCaptureEscrow) revert OnlyAuthCaptureEscrow();
        SafeTransfer.transfer(token, recipient, amount);
        return true;
    }
}
