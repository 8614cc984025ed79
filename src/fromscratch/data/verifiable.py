"""Problems whose answers a program can check: addition, multiplication and Countdown (chapter 17).

Each generator is deterministic from its seed and draws each problem once. Problems are split into
train and held-out by problem, not by draw: a problem's split is a hash of its canonical key (the
operands in sorted order, so ``12+34`` and ``34+12`` are one problem), so no problem, nor its
commuted form, is in both, however many are drawn. :func:`worked_solution` writes what a model is to
imitate: a scratchpad (column-wise addition with its carries; the partial products of a
multiplication; the steps of a Countdown expression), then the answer.

**The answer format**: the response ends with exactly one ``<answer>…</answer>`` (only whitespace
after it); inside, a whole number in ASCII digits written without leading zeros (``125``, ``-7``) for
addition and multiplication, or for Countdown an expression of the given numbers with ``+ - * /`` and
parentheses, spaces allowed (``(3 + 5) * 2``). :mod:`fromscratch.data.verifiers` parses it and scores.
"""

from __future__ import annotations

import ast
import hashlib
import random
from dataclasses import dataclass

TASKS = ("addition", "multiplication", "countdown")
HELD_OUT = 0.2  # the share of problems that are held out
COUNTDOWN_LARGEST = 20  # Countdown's numbers are drawn from 1 to this
COUNTDOWN_TARGETS = 1000  # and a target is at most this
OPEN, CLOSE = "<answer>", "</answer>"


@dataclass(frozen=True)
class Problem:
    """One problem: ``task`` (one of :data:`TASKS`), its ``numbers`` (the two operands; Countdown: the
    numbers given), ``target`` (the exact answer; Countdown: the number to reach) and, for Countdown,
    ``witness``: one expression that reaches the target, the generator's."""

    task: str
    numbers: tuple[int, ...]
    target: int
    witness: str = ""

    @property
    def key(self) -> str:
        """The problem's name, the same for every order of its numbers: ``"addition:12,34"``."""
        return f"{self.task}:{','.join(map(str, sorted(self.numbers)))}->{self.target}"

    @property
    def prompt(self) -> str:
        """The question as the model reads it: ``"58+67"``, ``"47*36"``, ``"make 16 from 3 5 2 7"``."""
        if self.task == "countdown":
            return f"make {self.target} from {' '.join(map(str, self.numbers))}"
        return f"{self.numbers[0]}{'+' if self.task == 'addition' else '*'}{self.numbers[1]}"


def is_held_out(problem: Problem, fraction: float = HELD_OUT) -> bool:
    """Whether ``problem`` belongs to the held-out split: a hash of its key, the same on every machine."""
    digest = hashlib.sha256(problem.key.encode()).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def _arithmetic(task: str, rng: random.Random, digits: int) -> Problem:
    """Two operands of exactly ``digits`` digits each, and their sum or product."""
    a, b = (rng.randrange(10 ** (digits - 1), 10**digits) for _ in range(2))
    return Problem(task, (a, b), a + b if task == "addition" else a * b)


def _wrap(expression: str, precedence: int, need: int) -> str:
    """``expression`` in parentheses when its operator binds less tightly than its place needs."""
    return f"({expression})" if precedence < need else expression


def _combine(rng: random.Random, left, right):
    """One random operation of two ``(value, expression, precedence)`` items that keeps every value a
    positive whole number (``-`` only to a positive result, ``/`` only when it divides). Precedence: 3
    for a number, 2 for ``*`` ``/``, 1 for ``+`` ``-``."""
    (a, ea, pa), (b, eb, pb) = left, right
    ops = ["+", "*"] + (["-"] if a > b else []) + (["/"] if b > 1 and a % b == 0 else [])
    op = rng.choice(ops)
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
    precedence = 1 if op in "+-" else 2
    # The right operand of - and / needs parentheses around an operator of its own precedence.
    right_need = precedence + (op in "-/")
    expression = f"{_wrap(ea, pa, precedence)} {op} {_wrap(eb, pb, right_need)}"
    return value, expression, precedence


def _countdown(rng: random.Random, size: int) -> Problem:
    """``size`` numbers from 1 to :data:`COUNTDOWN_LARGEST` and a target reached by combining all of
    them at random (:func:`_combine`); drawn again until the target is at most :data:`COUNTDOWN_TARGETS`
    and is not one of the numbers."""
    while True:
        numbers = tuple(rng.randint(1, COUNTDOWN_LARGEST) for _ in range(size))
        items = [(x, str(x), 3) for x in numbers]
        while len(items) > 1:
            i, j = rng.sample(range(len(items)), 2)
            left, right = items[i], items[j]
            items = [item for k, item in enumerate(items) if k not in (i, j)] + [_combine(rng, left, right)]
        target, expression, _ = items[0]
        if target <= COUNTDOWN_TARGETS and target not in numbers:
            return Problem("countdown", numbers, target, expression)


def generate(
    task: str, count: int, *, split: str = "train", seed: int = 0, size: int = 3, held_out: float = HELD_OUT
) -> list[Problem]:
    """``count`` distinct problems of ``task`` from ``split`` (``"train"`` or ``"held_out"``), the same
    for the same arguments. ``size``: the digits of each operand (addition, multiplication), or how
    many numbers are given (Countdown). Raises ``ValueError`` when the split holds fewer problems."""
    if task not in TASKS:
        raise ValueError(f"task={task!r}: choose one of {TASKS}.")
    if split not in ("train", "held_out"):
        raise ValueError(f"split={split!r}: choose 'train' or 'held_out'.")
    if size < (2 if task == "countdown" else 1) or not 0 < held_out < 1:
        raise ValueError(f"size={size} (a Countdown needs >= 2 numbers) and held_out={held_out} in (0, 1).")
    rng = random.Random(f"{task}/{size}/{seed}")  # a str seed: the same stream on every machine
    found: dict[str, Problem] = {}
    misses = 0  # draws in a row that brought nothing new
    while len(found) < count:
        p = _countdown(rng, size) if task == "countdown" else _arithmetic(task, rng, size)
        if is_held_out(p, held_out) == (split == "held_out") and p.key not in found:
            found[p.key], misses = p, 0
        elif (misses := misses + 1) > 1000 + 50 * count:
            raise ValueError(
                f"{task} of size {size}: only {len(found)} distinct {split} problems found, {count} asked: "
                "ask for fewer, or a larger size."
            )
    return list(found.values())


def answer(text: object) -> str:
    """The final line of a response: ``<answer>text</answer>``."""
    return f"{OPEN}{text}{CLOSE}"


def _addition_steps(a: int, b: int) -> list[str]:
    """Column by column from the right, each line ``x+y+carry=sum: write digit, carry c``."""
    xs, ys = str(a)[::-1], str(b)[::-1]
    lines, carry = [], 0
    for i in range(max(len(xs), len(ys))):
        x, y = (int(s[i]) if i < len(s) else 0 for s in (xs, ys))
        total = x + y + carry
        lines.append(f"{x}+{y}+{carry}={total}: write {total % 10}, carry {total // 10}")
        carry = total // 10
    return lines + ([f"carry {carry}: write {carry}"] if carry else [])


def _multiplication_steps(a: int, b: int) -> list[str]:
    """One partial product per digit of ``b`` (``47*6=282``, ``47*30=1410``), then their sum."""
    parts = [int(d) * 10**i for i, d in enumerate(str(b)[::-1])]
    lines = [f"{a}*{p}={a * p}" for p in parts]
    if len(parts) > 1:
        lines.append(f"{'+'.join(str(a * p) for p in parts)}={a * b}")
    return lines


def worked_solution(problem: Problem) -> str:
    """The response a model is to imitate for ``problem``: the scratchpad lines, then :func:`answer`."""
    if problem.task == "addition":
        lines = _addition_steps(*problem.numbers)
    elif problem.task == "multiplication":
        lines = _multiplication_steps(*problem.numbers)
    else:
        lines = _countdown_steps(problem.witness)
    return "\n".join([*lines, answer(problem.witness or problem.target)])


def _countdown_steps(expression: str) -> list[str]:
    """The witness's operations in the order Python evaluates them: ``3+5=8``, ``8*2=16``."""
    steps: list[str] = []

    def walk(node: ast.expr) -> int:
        if isinstance(node, ast.Constant):
            return node.value
        a, b = walk(node.left), walk(node.right)
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}[type(node.op)]
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
        steps.append(f"{a}{op}{b}={value}")
        return value

    walk(ast.parse(expression, mode="eval").body)
    return steps
