"""``python -m ulnorm_eval``: the ``ulnorm-eval`` command, run from wherever ``ulnorm_eval`` is imported
(the tests run the checkout's code this way, whatever console script is installed)."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="ulnorm-eval")
