"""A ``maintext`` subcommand that starts without the other commands' imports."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Subcommand:
    """Its name, help texts and arguments: one parser among ``maintext``'s commands (for
    ``maintext -h``), or its own (run directly by ``maintext NAME ...``)."""

    name: str
    help: str
    description: str
    epilog: str
    add_arguments: Callable[[argparse.ArgumentParser], None]

    def add_to(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        self.add_arguments(
            commands.add_parser(
                self.name,
                help=self.help,
                description=self.description,
                epilog=self.epilog,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        )

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog=f"maintext {self.name}",
            description=self.description,
            epilog=self.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.add_arguments(parser)
        return parser
