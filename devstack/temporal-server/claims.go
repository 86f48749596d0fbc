package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/primitives"
)

// signalPermission lets a caller signal workflows in a namespace and nothing else beyond its other
// roles: what an operator console needs to void an authorization, without the writer role's
// terminate, reset, start or update.
const signalPermission = "signal"

// operatorTokenGrant, as "operator-token-sha256:<hex>", makes a certificate's grants hold only for
// calls that also carry the token whose SHA-256 that is, in the authorization-extras header. The
// production shape's Web UI has such a certificate: its gate (devstack/uiGate.ts) adds the operator's
// token to what it forwards, so the UI's own port, reached around the gate, can read nothing.
const operatorTokenGrant = "operator-token-sha256"

// grants are the namespaces where a caller may signal (claims.Extensions).
type grants struct {
	signal map[string]bool
}

// certificateClaimMapper gives a caller the roles its client certificate names, one
// OrganizationalUnit per grant, in the form of Temporal's JWT "permissions" claim:
// "<namespace>:<read|write|worker|admin|signal>", "temporal-system:<role>" for the whole cluster.
// The frontend has already verified the certificate against its client CA (requireClientAuth), so
// whoever holds a certificate from that CA holds what it says; anything else grants nothing. A bearer
// token (the authorization header) is ignored: roles come from certificates alone, and from the
// operator token where the certificate asks for one.
type certificateClaimMapper struct{}

var _ authorization.ClaimMapper = certificateClaimMapper{}

func (certificateClaimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	claims := &authorization.Claims{Namespaces: map[string]authorization.Role{}}
	extra := grants{signal: map[string]bool{}}
	claims.Extensions = extra
	if info == nil || info.TLSSubject == nil {
		return claims, nil
	}
	claims.Subject = info.TLSSubject.CommonName
	if !operatorTokenPresented(info) {
		return claims, nil
	}
	for _, grant := range info.TLSSubject.OrganizationalUnit {
		namespace, permission, ok := strings.Cut(grant, ":")
		if !ok || namespace == "" || namespace == operatorTokenGrant {
			continue
		}
		if permission == signalPermission {
			extra.signal[namespace] = true
			continue
		}
		role := roleOf(permission)
		if namespace == primitives.SystemLocalNamespace {
			claims.System |= role
		} else {
			claims.Namespaces[namespace] |= role
		}
	}
	return claims, nil
}

func roleOf(permission string) authorization.Role {
	switch permission {
	case "read":
		return authorization.RoleReader
	case "write":
		return authorization.RoleWriter
	case "worker":
		return authorization.RoleWorker
	case "admin":
		return authorization.RoleAdmin
	}
	return authorization.RoleUndefined
}

// operatorTokenPresented: every operator token the certificate names came with the call (true when it
// names none).
func operatorTokenPresented(info *authorization.AuthInfo) bool {
	presented := sha256.Sum256([]byte(info.ExtraData))
	for _, grant := range info.TLSSubject.OrganizationalUnit {
		kind, digest, ok := strings.Cut(grant, ":")
		if !ok || kind != operatorTokenGrant {
			continue
		}
		want, err := hex.DecodeString(digest)
		if err != nil || len(want) != sha256.Size || info.ExtraData == "" || subtle.ConstantTimeCompare(presented[:], want) != 1 {
			return false
		}
	}
	return true
}
