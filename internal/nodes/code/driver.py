# pflow code-node driver. Run by pflow as `python3 -u -X utf8 -c <this file>`.
#
# Protocol: pflow writes one JSON request on stdin:
#   {"code": str, "inputs": {name: value}, "check_only": bool}
# and reads one JSON reply from file descriptor 3 (so that the user's prints
# on stdout/stderr never corrupt it):
#   {"ok": true, "result": value}
#   {"ok": false, "error": {"type", "message", "line", "phase", "hint"}}
# "line" is 1-based within the code block (0 when unknown). "phase" is one of
# syntax, contract, input, runtime, result.
import ast
import base64
import builtins
import json
import math
import os
import sys
import traceback

FILENAME = "<pflow code>"

CHECKABLE = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "dict": dict,
    "set": set,
    "tuple": tuple,
    "bytes": bytes,
    "None": type(None),
    "NoneType": type(None),
}
TYPING_ALIASES = {
    "List": "list",
    "Dict": "dict",
    "Set": "set",
    "Tuple": "tuple",
    "FrozenSet": "set",
    "Sequence": None,
    "Mapping": None,
}


def outer_types(node):
    """Return the set of outer type names an annotation allows, or None when
    the annotation cannot be checked (Any, object, custom classes...)."""
    if isinstance(node, ast.Constant):
        if node.value is None:
            return {"None"}
        if isinstance(node.value, str):
            try:
                return outer_types(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return None
        return None
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Subscript):
        base = node.value
        base_name = base.id if isinstance(base, ast.Name) else (base.attr if isinstance(base, ast.Attribute) else None)
        if base_name == "Optional":
            inner = outer_types(node.slice)
            return None if inner is None else inner | {"None"}
        if base_name == "Union":
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            out = set()
            for e in elts:
                t = outer_types(e)
                if t is None:
                    return None
                out |= t
            return out
        return outer_types(base)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = outer_types(node.left), outer_types(node.right)
        if left is None or right is None:
            return None
        return left | right
    else:
        return None
    if name in TYPING_ALIASES:
        name = TYPING_ALIASES[name]
        if name is None:
            return None
    if name in CHECKABLE:
        return {"None" if name == "NoneType" else name}
    return None


def type_name(v):
    if v is None:
        return "None"
    return type(v).__name__


def matches(v, allowed):
    for t in allowed:
        if t == "None" and v is None:
            return True
        if t == "int" and isinstance(v, int) and not isinstance(v, bool):
            return True
        if t == "float" and isinstance(v, (int, float)) and not isinstance(v, bool):
            return True
        if t not in ("None", "int", "float") and isinstance(v, CHECKABLE[t]):
            return True
    return False


def convert_input(v, allowed):
    """JSON has no tuple/set/bytes: convert a list or string when the
    annotation asks for one of those and nothing else matches."""
    if matches(v, allowed):
        return v, True
    if isinstance(v, list):
        if "tuple" in allowed:
            return tuple(v), True
        if "set" in allowed:
            try:
                return set(v), True
            except TypeError:
                return v, False
    if isinstance(v, str) and "bytes" in allowed:
        return v.encode("utf-8"), True
    return v, False


def describe(allowed):
    return " | ".join(sorted(allowed))


def fail(phase, type_, message, line=0, hint=""):
    return {"ok": False, "error": {"phase": phase, "type": type_, "message": message, "line": line or 0, "hint": hint}}


def to_json_value(v, path="result"):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise ValueError("%s is %r, which JSON cannot represent; use None or a string instead" % (path, v))
        return v
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
        return [to_json_value(x, "%s[%d]" % (path, i)) for i, x in enumerate(items)]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                if isinstance(k, (int, float, bool)) or k is None:
                    k = json.dumps(k)
                else:
                    raise ValueError("%s has a key of type %s; dict keys must be strings" % (path, type_name(k)))
            out[k] = to_json_value(x, "%s[%r]" % (path, k))
        return out
    if isinstance(v, (bytes, bytearray)):
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(bytes(v)).decode("ascii")
    raise ValueError(
        "%s is a %s, which cannot be passed on as JSON; convert it first (e.g. str(value), or a dict/list of plain values)"
        % (path, type_name(v))
    )


def error_line(tb):
    line = 0
    for frame in traceback.extract_tb(tb):
        if frame.filename == FILENAME:
            line = frame.lineno or 0
    return line


def hint_for(exc):
    if isinstance(exc, ModuleNotFoundError) or isinstance(exc, ImportError):
        mod = getattr(exc, "name", None) or "the module"
        return (
            "Module '%s' is not installed for %s. Install it with: %s -m pip install %s (and list it under 'requires' in the step)"
            % (mod, sys.executable, sys.executable, mod)
        )
    if isinstance(exc, NameError):
        return (
            "Check the spelling. Values from other steps must be passed through the step's 'inputs' param "
            "and declared with a type annotation at the top of the code (e.g. data: list)."
        )
    if isinstance(exc, KeyError):
        return "The key does not exist; check the input's structure or use .get(key, default)."
    return ""


def run(req):
    code = req.get("code", "")
    inputs = req.get("inputs") or {}

    try:
        tree = ast.parse(code, filename=FILENAME, mode="exec")
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        return fail("syntax", type(e).__name__, msg, e.lineno or 0)
    if req.get("check_only"):
        return {"ok": True, "result": None}

    annotations = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            annotations.setdefault(stmt.target.id, stmt.annotation)

    missing = [name for name in inputs if name not in annotations]
    if missing:
        lines = "\n".join("  %s: <type>" % name for name in missing)
        return fail(
            "contract",
            "ContractError",
            "Input(s) missing type annotation in code: %s\nAdd annotations:\n%s" % (", ".join(missing), lines),
        )
    if "result" not in annotations:
        return fail("contract", "ContractError", "Code must declare result type annotation: result: <type> = ...")

    env = {"__name__": "__main__", "__builtins__": builtins}
    for name, v in inputs.items():
        allowed = outer_types(annotations[name])
        if allowed is not None:
            v, ok = convert_input(v, allowed)
            if not ok:
                want = describe(allowed)
                got = type_name(v)
                return fail(
                    "input",
                    "TypeError",
                    "Input '%s' expects %s but received %s\n\nSuggestions:\n  - Change the type annotation to: %s: %s\n  - Or convert the input value to %s"
                    % (name, want, got, name, got, want),
                    annotations[name].lineno,
                )
        env[name] = v

    try:
        exec(compile(tree, FILENAME, "exec"), env)
    except SystemExit as e:
        return fail("runtime", "SystemExit", "Code called exit(%r); set 'result' instead of exiting" % (e.code,), error_line(sys.exc_info()[2]))
    except BaseException as e:  # noqa: BLE001 - report everything the user code raised
        return fail("runtime", type(e).__name__, str(e), error_line(e.__traceback__), hint_for(e))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()

    if "result" not in env:
        return fail("result", "ResultError", "Code must set 'result' variable. Add: result = <your_value>", annotations["result"].lineno)
    result = env["result"]
    allowed = outer_types(annotations["result"])
    if allowed is not None and not matches(result, allowed):
        got = type_name(result)
        want = describe(allowed)
        return fail(
            "result",
            "TypeError",
            "Result declared as %s but code returned %s\n\nSuggestions:\n  - Change the annotation to: result: %s\n  - Or convert the value before assigning it to result"
            % (want, got, got),
            annotations["result"].lineno,
        )
    try:
        return {"ok": True, "result": to_json_value(result)}
    except ValueError as e:
        return fail("result", "ValueError", str(e), annotations["result"].lineno)


def main():
    reply_fd = int(os.environ.pop("PFLOW_CODE_REPLY_FD", "3"))
    out = os.fdopen(reply_fd, "w", encoding="utf-8")
    try:
        os.set_inheritable(reply_fd, False)
    except OSError:
        pass
    try:
        req = json.loads(sys.stdin.read())
    except ValueError as e:
        reply = fail("driver", "DriverError", "invalid request from pflow: %s" % e)
    else:
        try:
            sys.stdin.close()
            sys.stdin = open(os.devnull)
        except OSError:
            pass
        reply = run(req)
    out.write(json.dumps(reply, ensure_ascii=False, allow_nan=False))
    out.flush()
    out.close()


main()
