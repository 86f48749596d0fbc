// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A contract wallet for tests: it approves exactly the raw digests its owner EOA signed
/// (no EIP-191 prefix), which is how a smart-account payer authorizes an EIP-3009 transfer.
contract MockERC1271Wallet {
    bytes4 private constant MAGIC_VALUE = 0x1626ba7e;
    bytes4 private constant INVALID = 0xffffffff;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        address recovered = ecrecover(hash, v, r, s);
        return recovered != address(0) && recovered == owner ? MAGIC_VALUE : INVALID;
    }
}
