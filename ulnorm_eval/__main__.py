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
        from .cli import main, support

        support.COMMAND_PROCESS = True  # the command's modules too (cli.support.command_imports)
    finally:
        gc.freeze()
        if enabled:  # as it was: a program that turned the collector off keeps it off
            gc.enable()
    return main(prog_name="ulnorm-eval")


if __name__ == "__main__":
    run()
