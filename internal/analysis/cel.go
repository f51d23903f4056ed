package analysis

import (
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// The CEL of conditions judges NaN and ±Inf as Argo Rollouts' expressions
// do (Go's float semantics), so that conditions carry over:
//
//   - CEL's own ordering of NaN is an error ("NaN values cannot be
//     ordered"), which would make every NaN sample an Error measurement.
//     Here <, <=, > and >= with a NaN operand are false, as in Go: NaN fails
//     a `result[0] >= 0.95` successCondition and passes a
//     `result[0] < 0.95` failureCondition, as in Argo. == and != are CEL's
//     (NaN equals nothing).
//   - isNaN and isInf (either sign) test a double, or a list of them (true
//     when any element is), as Argo's isNaN and isInf do.

// conditionFunctions declares isNaN and isInf.
func conditionFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		floatTest("isNaN", math.IsNaN),
		floatTest("isInf", func(f float64) bool { return math.IsInf(f, 0) }),
	}
}

// floatTest declares name(double) and name(list(double)) as test on a
// double, and on a list true when it holds for any element.
func floatTest(name string, test func(float64) bool) cel.EnvOption {
	return cel.Function(name,
		cel.Overload(name+"_double", []*cel.Type{cel.DoubleType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val { return types.Bool(holdsFor(v, test)) })),
		cel.Overload(name+"_list_double", []*cel.Type{cel.ListType(cel.DoubleType)}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val { return anyElement(v, test) })),
	)
}

// holdsFor reports whether v is a double for which test holds.
func holdsFor(v ref.Val, test func(float64) bool) bool {
	d, ok := v.(types.Double)
	return ok && test(float64(d))
}

// anyElement reports whether test holds for any element of the list v.
func anyElement(v ref.Val, test func(float64) bool) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	for it := l.Iterator(); it.HasNext() == types.True; {
		if holdsFor(it.Next(), test) {
			return types.True
		}
	}
	return types.False
}

// nanOrdering is the decorator that replaces CEL's ordering operators by
// ones for which a NaN operand makes the comparison false.
func nanOrdering(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || len(call.Args()) != 2 {
		return i, nil
	}
	var holds func(cmp types.Int) bool
	switch call.Function() {
	case operators.Less:
		holds = func(c types.Int) bool { return c < 0 }
	case operators.LessEquals:
		holds = func(c types.Int) bool { return c <= 0 }
	case operators.Greater:
		holds = func(c types.Int) bool { return c > 0 }
	case operators.GreaterEquals:
		holds = func(c types.Int) bool { return c >= 0 }
	default:
		return i, nil
	}
	return &ordering{InterpretableCall: call, holds: holds}, nil
}

// ordering is one comparison <, <=, > or >= that is false on NaN. It
// stays an InterpretableCall (same function, overload and arguments), so
// CEL's cost tracking counts it as the call it replaces.
type ordering struct {
	interpreter.InterpretableCall
	holds func(cmp types.Int) bool
}

// Exec evaluates both operands once and compares them as CEL does, but
// for NaN.
func (o *ordering) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	args := o.Args()
	lhs := args[0].Exec(frame)
	if types.IsUnknownOrError(lhs) {
		return lhs
	}
	rhs := args[1].Exec(frame)
	if types.IsUnknownOrError(rhs) {
		return rhs
	}
	if holdsFor(lhs, math.IsNaN) || holdsFor(rhs, math.IsNaN) {
		return types.False
	}
	c, ok := lhs.(traits.Comparer)
	if !ok {
		return types.MaybeNoSuchOverloadErr(lhs)
	}
	cmp, ok := c.Compare(rhs).(types.Int)
	if !ok {
		return c.Compare(rhs)
	}
	return types.Bool(o.holds(cmp))
}

// Eval is Exec for callers of the older interface.
func (o *ordering) Eval(a interpreter.Activation) ref.Val {
	return o.Exec(interpreter.AsFrame(a))
}
