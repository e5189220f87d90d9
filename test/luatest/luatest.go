// Package luatest runs the Lua of Karmada resource interpreter
// customizations in tests, on gopher-lua (Lua 5.1, as Karmada's
// interpreter), converting JSON-shaped Go values to Lua tables and back.
package luatest

import (
	"encoding/json"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Call runs script and calls fn with args (JSON-shaped: maps, slices,
// strings, float64, bools), returning its nret results.
func Call(script, fn string, nret int, args ...any) ([]any, error) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(script); err != nil {
		return nil, fmt.Errorf("loading the script: %w", err)
	}
	largs := make([]lua.LValue, 0, len(args))
	for _, a := range args {
		largs = append(largs, ToLua(L, a))
	}
	if err := L.CallByParam(lua.P{Fn: L.GetGlobal(fn), NRet: nret, Protect: true}, largs...); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	out := make([]any, nret)
	for i := nret - 1; i >= 0; i-- {
		out[i] = FromLua(L.Get(-1))
		L.Pop(1)
	}
	return out, nil
}

// JSON turns a Go object into the JSON-shaped value Karmada hands to
// scripts.
func JSON(obj any) (any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(raw, &v)
}

// ToLua converts a JSON-shaped value.
func ToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		tb := L.NewTable()
		for _, e := range x {
			tb.Append(ToLua(L, e))
		}
		return tb
	case map[string]any:
		tb := L.NewTable()
		for k, e := range x {
			tb.RawSetString(k, ToLua(L, e))
		}
		return tb
	}
	return lua.LNil
}

// FromLua converts back: a table with an array part becomes a slice, any
// other a map.
func FromLua(v lua.LValue) any {
	switch x := v.(type) {
	case lua.LBool:
		return bool(x)
	case lua.LNumber:
		return float64(x)
	case lua.LString:
		return string(x)
	case *lua.LTable:
		if n := x.MaxN(); n > 0 {
			out := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				out = append(out, FromLua(x.RawGetInt(i)))
			}
			return out
		}
		out := map[string]any{}
		x.ForEach(func(k, e lua.LValue) { out[k.String()] = FromLua(e) })
		return out
	}
	return nil
}
