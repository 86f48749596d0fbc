// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// ERC-20 calls that treat "no revert but returned false" as the failure it is, and accept tokens
/// that return nothing at all (the usual "safe transfer" rule).
library SafeTransfer {
    error TransferFailed(address token);

    function transfer(address token, address to, uint256 amount) internal {
        _call(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
    }

    function transferFrom(address token, address from, address to, uint256 amount) internal {
        _call(token, abi.encodeWithSelector(0x23b872dd, from, to, amount));
    }

    function _call(address token, bytes memory data) private {
        (bool ok, bytes memory result) = token.call(data);
        if (!ok) {
            // Bubble the token's own reason up ("Pausable: paused", a blacklist…): callers read it.
            assembly ("memory-safe") {
                revert(add(result, 32), mload(result))
            }
        }
        if (result.length == 0 ? token.code.length == 0 : !abi.decode(result, (bool))) revert TransferFailed(token);
    }
}
