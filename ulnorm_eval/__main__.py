"""``python -m ulnorm_eval`` and the ``ulnorm-eval`` console script: the command, run from wherever
``ulnorm_eval`` is imported (the tests run the checkout's code this way, whatever console script is
installed)."""


def run():
    """Run the ``ulnorm-eval`` command in this process."""
    from .cli import main

    return main(prog_name="ulnorm-eval")


if __name__ == "__main__":
    run()
