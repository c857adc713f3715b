"""``python -m ulnorm_eval`` and the ``ulnorm-eval`` console script: the command, run from wherever
``ulnorm_eval`` is imported (the tests run the checkout's code this way, whatever console script is
installed)."""


def run():
    """Run the ``ulnorm-eval`` command in this process.

    Python's cyclic garbage collector is paused while the command's modules are imported, and the
    objects they create are then frozen (``gc.freeze``) before it runs again: those functions,
    classes and tables live as long as the process, and every collection during start-up would
    otherwise traverse all of them again (1-3 ms of a 145 ms 50-query evaluation, measured through
    ``python -m ulnorm_eval``).  Collections then run as usual for the command's work.
    Only the command's own process does this: importing ``ulnorm_eval`` (or its CLI) leaves the
    collector alone.
    """
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        serve_dataclass_code()
        from .cli import main, support

        support.COMMAND_PROCESS = True  # the command's modules too (cli.support.command_imports)
    finally:
        gc.freeze()
        if enabled:  # as it was: a program that turned the collector off keeps it off
            gc.enable()
    return main(prog_name="ulnorm-eval")


def serve_dataclass_code() -> None:
    """Let ``dataclasses`` take the code of the methods it generates for this package's dataclasses from
    :mod:`ulnorm_eval.dataclass_code` (compiled once into its .pyc) instead of compiling their text at
    every start (58M of a 50-query evaluation's 830M instructions; scripts/gen_dataclass_code.py).

    ``dataclasses`` compiles each method's text with ``exec``, looked up in its module's globals: this
    puts there an ``exec`` that, for a text found in ``TEXTS``, does what ``exec`` of that text does
    (define ``__create_fn__`` in the namespace given, with the globals given) with the code compiled
    from that same text, and hands anything else to the built-in ``exec``.  Not done under another
    Python (other texts), nor when something else replaced ``dataclasses.exec`` already.  The
    command's own process only: importing ``ulnorm_eval`` changes nothing.
    """
    import builtins
    import dataclasses
    import os
    import sys
    import types

    # Only from a compiled module: compiling dataclass_code.py's 280 KB of source (60-120 ms) costs
    # more than it saves, so with no .pyc that Python may write (PYTHONDONTWRITEBYTECODE, a source
    # tree) the methods are compiled as usual
    pyc = os.path.join(os.path.dirname(__file__), "__pycache__", f"dataclass_code.{sys.implementation.cache_tag}.pyc")
    if sys.dont_write_bytecode and not os.path.exists(pyc):
        return
    from . import dataclass_code

    if dataclass_code.PYTHON != tuple(sys.version_info[:2]) or "exec" in vars(dataclasses):
        return
    codes = dict(zip(dataclass_code.TEXTS, dataclass_code.CODES))

    def exec_(source, globals=None, locals=None, /, **kw):
        code = codes.get(source) if type(source) is str and not kw else None
        if code is None or type(globals) is not dict or type(locals) is not dict or "__builtins__" not in globals:
            return builtins.exec(source, globals, locals, **kw)
        locals["__create_fn__"] = types.FunctionType(as_compiled(code), globals)
        return None

    dataclasses.exec = exec_


def as_compiled(code):
    """``code`` (a function of dataclass_code.py) as ``compile(text, "<string>", "exec")`` makes it:
    its file is ``<string>`` and its text starts on line 1 (its nested functions' lines shift along)."""
    shift = code.co_firstlineno - 1

    def moved(c):
        consts = tuple(moved(k) if isinstance(k, type(c)) else k for k in c.co_consts)
        return c.replace(co_filename="<string>", co_firstlineno=c.co_firstlineno - shift, co_consts=consts)

    return moved(code)


if __name__ == "__main__":
    run()
