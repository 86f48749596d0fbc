package main

import (
	"context"

	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

const signalAPI = api.WorkflowServicePrefix + "SignalWorkflowExecution"

// signalGrantAuthorizer is Temporal's default authorizer (roles by the API's scope and access) plus
// one rule: a "<namespace>:signal" grant allows SignalWorkflowExecution in that namespace.
type signalGrantAuthorizer struct {
	base authorization.Authorizer
}

var _ authorization.Authorizer = signalGrantAuthorizer{}

func (a signalGrantAuthorizer) Authorize(ctx context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	result, err := a.base.Authorize(ctx, claims, target)
	if err != nil || result.Decision == authorization.DecisionAllow {
		return result, err
	}
	if target.APIName == signalAPI && claims != nil {
		if extra, ok := claims.Extensions.(grants); ok && extra.signal[target.Namespace] {
			return authorization.Result{Decision: authorization.DecisionAllow}, nil
		}
	}
	return result, nil
}
