"""Reading and scoring a model's answer to a :class:`~fromscratch.data.verifiable.Problem` (chapter 17).

A reward a policy is trained on gets exploited wherever it is loose, so the parser is strict: exactly
one ``<answer>…</answer>``, closed, at the very end; inside, only the answer (whitespace around it is
fine), in ASCII digits (``int("٥")`` is 5 in Python; here it is no answer). A Countdown expression is
read with :mod:`ast`, never ``eval``: whole numbers, ``+ - * /`` and parentheses only (no ``**``, no
unary minus), each given number used at most once, at most :data:`MAX_CHARS` characters, computed
exactly with :class:`~fractions.Fraction`; a division by zero is a wrong answer, not an error.

Two rewards, kept apart: :func:`format_reward` (1 when the answer is well formed, whatever its value)
and :func:`correctness_reward` (1 when it is also right). Both are 0.0 or 1.0.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from fractions import Fraction

from fromscratch.data.verifiable import CLOSE, OPEN, Problem

MAX_CHARS = 100  # the longest answer read; a longer one is no answer
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)")  # ASCII digits, no leading zeros, no commas
EXPRESSION = re.compile(r"[0-9+\-*/() ]+")  # what a Countdown answer may contain
_OPERATIONS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,  # Fraction / Fraction: exact; raises ZeroDivisionError on 0
}


def parse_answer(response: str) -> str | None:
    """The text inside the response's one final ``<answer>…</answer>``, stripped of whitespace; None when
    there is no such answer: unfinished, two of them, text after it, or longer than :data:`MAX_CHARS`."""
    if response.count(OPEN) != 1 or response.count(CLOSE) != 1:
        return None
    _, _, rest = response.partition(OPEN)
    if CLOSE not in rest:  # closed before it was opened
        return None
    inside, _, after = rest.partition(CLOSE)
    inside = inside.strip()
    if after.strip() or len(inside) > MAX_CHARS:
        return None
    return inside


def _tree(expression: str) -> ast.expr | None:
    """The syntax tree of a Countdown answer made only of whole numbers, ``+ - * /`` and parentheses."""
    if len(expression) > MAX_CHARS or "**" in expression or "//" in expression:
        return None
    if not EXPRESSION.fullmatch(expression):
        return None
    try:
        tree = ast.parse(expression, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    allowed = (ast.BinOp, ast.Constant, *_OPERATIONS)  # the operators are nodes of their own
    for node in ast.walk(tree):
        if not isinstance(node, allowed) or isinstance(node, ast.Constant) and type(node.value) is not int:
            return None  # a unary minus, a power, a float, ...
    return tree


def evaluate_countdown(expression: str, numbers: tuple[int, ...]) -> Fraction | None:
    """The exact value of a Countdown answer that uses each of ``numbers`` at most once (a number given
    twice may be used twice); None when it breaks a rule or divides by zero."""
    tree = _tree(expression)
    if tree is None:
        return None
    used = Counter(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant))
    if used - Counter(numbers):  # a number not given, or used more often than given
        return None

    def value(node: ast.expr) -> Fraction:
        if isinstance(node, ast.Constant):
            return Fraction(node.value)
        return _OPERATIONS[type(node.op)](value(node.left), value(node.right))

    try:  # only the given numbers, each once: the value stays small
        return value(tree)
    except ZeroDivisionError:
        return None


def format_reward(problem: Problem, response: str) -> float:
    """1.0 when ``response`` ends in one well-formed answer for ``problem``'s task (a whole number; for
    Countdown an expression of whole numbers, ``+ - * /`` and parentheses), whatever its value; else 0.0."""
    text = parse_answer(response)
    if text is None:
        return 0.0
    if problem.task == "countdown":
        return float(_tree(text) is not None)
    return float(NUMBER.fullmatch(text) is not None)


def correctness_reward(problem: Problem, response: str) -> float:
    """1.0 when ``response``'s answer is well formed and right for ``problem``, else 0.0: the number equals
    the target; for Countdown, the expression keeps the rules and its exact value is the target."""
    if not format_reward(problem, response):
        return 0.0
    text = parse_answer(response)
    if problem.task == "countdown":
        return float(evaluate_countdown(text, problem.numbers) == problem.target)
    return float(int(text) == problem.target)
