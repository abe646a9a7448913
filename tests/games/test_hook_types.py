"""mypy holds a game's hooks to the types its entry states (`Game[round, action, sight, choice,
...]`, engine/game.py): a hook that takes or gives the wrong thing is an error naming the hook,
and a hook that gives the right thing is none. mypy runs on a small game file written here, one
class of wrong hooks and one of right ones, with the project's settings ([tool.mypy])."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

GAME = '''
from __future__ import annotations

from typing import TYPE_CHECKING

from firmware_host.engine.game import Controls, Game, JsonDict, Policy
from firmware_host.games.classic.rules import PlayCard
from firmware_host.games.classic.sight import ClassicSight
from firmware_host.games.dice.rules import DiceAction, DiceRound, Die, DieColour, Reroll
from firmware_host.games.dice.sight import DiceSight

if TYPE_CHECKING:
    from PIL import Image

    from firmware_host.table.bot_players import Bot
    from firmware_host.table.machine import Table

Dice = Game[DiceRound, DiceAction, DiceSight, Die, "Bot", "Image.Image", "Table"]


class Wrong(Dice):
    def choices(self, c: Controls[Die]) -> list[str]:  # WRONG choices
        return ["a die"]

    def slap(self, c: Controls[Die], choice: Die, ts: int) -> PlayCard | None:  # WRONG slap
        return None

    def alt(self, c: Controls[Die], ts: int) -> DiceAction | None:
        return "reroll"  # WRONG alt

    def sight(self, rnd: DiceRound, seat: int) -> ClassicSight:  # WRONG sight
        raise NotImplementedError

    def policy(self, bot: Bot, sight: DiceSight) -> Policy[ClassicSight, DiceAction]:  # WRONG policy
        raise NotImplementedError

    def board(self, rnd: DiceRound, seats: list[int]) -> JsonDict:
        return {"dice": {1, 2}}  # WRONG board

    def said(self, action: str) -> str:  # WRONG said
        return action


class Right(Dice):
    def choices(self, c: Controls[Die]) -> list[Die]:
        return [Die(DieColour(0), 1)]

    def slap(self, c: Controls[Die], choice: Die, ts: int) -> DiceAction | None:
        return Reroll(c.seat, ts)

    def board(self, rnd: DiceRound, seats: list[int]) -> JsonDict:
        return {"dice": [1, 2], "seats": [{"seat": s + 1} for s in seats]}
'''


def test_a_hook_of_the_wrong_type_is_an_error_naming_it(tmp_path: Path) -> None:
    game = tmp_path / "hooks_game.py"
    game.write_text(GAME)
    out, err, status = api.run([
        "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
        "--no-error-summary", "--show-error-codes", str(game)])
    assert err == ""
    lines = GAME.splitlines()
    found = re.finditer(r"^[^:\n]*hooks_game\.py:(\d+): error: (.*)$", out, re.M)
    errors = [(int(m[1]), m[2]) for m in found]
    hooks: dict[str, str] = {}
    for line, message in errors:
        wrong = re.search(r"# WRONG (\w+)$", lines[line - 1])
        assert wrong is not None, f"an error on a right line {line}: {message}\n{out}"
        hooks[wrong[1]] = message
    assert sorted(hooks) == ["alt", "board", "choices", "policy", "said", "sight", "slap"], out
    # each says which hook it is about, or what it returns
    assert all('supertype "firmware_host.engine.game.Game"' in hooks[hook]
               for hook in ("choices", "slap", "sight", "policy", "said"))
    assert '"choices" incompatible with return type "Sequence[Die | None]"' in hooks["choices"]
    assert '"slap" incompatible with return type' in hooks["slap"]
    assert '"sight" incompatible with return type "DiceSight"' in hooks["sight"]
    assert '"policy" incompatible with return type' in hooks["policy"]
    assert 'Argument 1 of "said" is incompatible with supertype' in hooks["said"]
    assert 'Incompatible return value type (got "str"' in hooks["alt"]
    assert "set[int]" in hooks["board"]
    assert status == 1
