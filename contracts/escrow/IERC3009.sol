// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// The one EIP-3009 entry the payment collector calls: FiatToken v2.2's `bytes` form (EOA and ERC-1271 signers).
interface IERC3009 {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}
