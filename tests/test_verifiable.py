"""The problem generators (deterministic, split by problem) and the verifiers on the ways verifiers are
known to fail: an unfinished answer, two answers, extra text, the right number from a wrong expression,
a number used twice, division by zero, huge numbers, unicode digits, whitespace."""

from __future__ import annotations

import time

import pytest

from fromscratch.data.verifiable import TASKS, Problem, answer, generate, is_held_out, worked_solution
from fromscratch.data.verifiers import correctness_reward, evaluate_countdown, format_reward

ADD = Problem("addition", (58, 67), 125)
COUNTDOWN = Problem("countdown", (3, 5, 2, 7), 16, "(3 + 5) * 2")
SIZES = {"addition": 3, "multiplication": 2, "countdown": 4}


def _rewards(problem: Problem, response: str) -> tuple[float, float]:
    return format_reward(problem, response), correctness_reward(problem, response)


def test_generators_are_deterministic_and_distinct():
    for task in TASKS:
        first = generate(task, 50, seed=1, size=SIZES[task])
        assert first == generate(task, 50, seed=1, size=SIZES[task])
        assert first != generate(task, 50, seed=2, size=SIZES[task])
        assert len({p.key for p in first}) == 50


def test_no_problem_in_both_splits():
    for task in TASKS:
        size = 2 if task != "countdown" else 3
        train = generate(task, 600, split="train", size=size)
        held = generate(task, 150, split="held_out", size=size)
        assert not {p.key for p in train} & {p.key for p in held}
        assert not any(is_held_out(p) for p in train) and all(is_held_out(p) for p in held)
    commuted = Problem("addition", (34, 12), 46)
    assert commuted.key == Problem("addition", (12, 34), 46).key  # one problem, one split


def test_a_split_too_small_says_so():
    with pytest.raises(ValueError, match="distinct train problems"):
        generate("addition", 100, size=1)  # 45 unordered pairs of digits 1-9 in all
    with pytest.raises(ValueError, match="task="):
        generate("division", 1)


def test_every_worked_solution_is_right_and_every_witness_reaches_its_target():
    for task in TASKS:
        for problem in generate(task, 200, size=SIZES[task]):
            assert _rewards(problem, worked_solution(problem)) == (1.0, 1.0), problem
            if task == "countdown":
                assert evaluate_countdown(problem.witness, problem.numbers) == problem.target
                assert len(problem.numbers) == 4 and problem.target not in problem.numbers


def test_the_addition_scratchpad_carries_column_by_column():
    assert ADD.prompt == "58+67"
    assert worked_solution(ADD) == (
        "8+7+0=15: write 5, carry 1\n5+6+1=12: write 2, carry 1\ncarry 1: write 1\n<answer>125</answer>"
    )
    product = Problem("multiplication", (47, 36), 1692)
    assert worked_solution(product) == "47*6=282\n47*30=1410\n282+1410=1692\n<answer>1692</answer>"
    assert worked_solution(COUNTDOWN) == "3+5=8\n8*2=16\n<answer>(3 + 5) * 2</answer>"
    assert COUNTDOWN.prompt == "make 16 from 3 5 2 7"


@pytest.mark.parametrize(
    ("response", "rewards"),
    [
        ("working...\n<answer>125</answer>", (1.0, 1.0)),
        ("<answer>124</answer>", (1.0, 0.0)),  # well formed, wrong
        ("<answer>125", (0.0, 0.0)),  # unfinished
        ("8+7=15 so <answer>12", (0.0, 0.0)),
        ("<answer>125</answer>\n<answer>125</answer>", (0.0, 0.0)),  # two answers, even equal ones
        ("<answer>124</answer> no: <answer>125</answer>", (0.0, 0.0)),
        ("</answer>125<answer>", (0.0, 0.0)),
        ("<answer>125</answer> I think", (0.0, 0.0)),  # extra text after
        ("<answer>125 (final)</answer>", (0.0, 0.0)),  # extra text inside
        ("<answer>x = 125</answer>", (0.0, 0.0)),
        ("the sum is 125", (0.0, 0.0)),  # the right number, no answer
        ("125 = 58+67\n<answer>126</answer>", (1.0, 0.0)),  # the right number in the scratchpad only
        ("<answer>0125</answer>", (0.0, 0.0)),  # leading zero
        ("<answer>1,25</answer>", (0.0, 0.0)),
        ("<answer>١٢٥</answer>", (0.0, 0.0)),  # Arabic-Indic digits: int() reads them as 125
        ("<answer>１２５</answer>", (0.0, 0.0)),  # fullwidth digits
        ("<answer>" + "9" * 5000 + "</answer>", (0.0, 0.0)),  # huge: no int() of 5000 digits
        ("<answer> 125 </answer>", (1.0, 1.0)),  # whitespace around is fine
        ("<answer>\n125\n</answer>\n\n", (1.0, 1.0)),
        ("<answer>1 25</answer>", (0.0, 0.0)),
    ],
)
def test_number_answers(response, rewards):
    assert _rewards(ADD, response) == rewards


@pytest.mark.parametrize(
    ("expression", "rewards"),
    [
        ("(3 + 5) * 2", (1.0, 1.0)),
        ("(3+5)*2", (1.0, 1.0)),
        ("  ( 3 + 5 ) * 2 ", (1.0, 1.0)),  # whitespace
        ("7 * 2 + 5 - 3 + 0", (1.0, 0.0)),  # the right value, but 0 is not given
        ("5 * 2 + 3 + 7 - 2 * 2", (1.0, 0.0)),  # 2 used three times
        ("3 * 5 + 2 - 7 + 3 + 3", (1.0, 0.0)),  # 3 used three times
        ("16", (1.0, 0.0)),  # the right number, from no expression
        ("8 * 2", (1.0, 0.0)),  # the right number from a number not given
        ("3 + 5 * 2", (1.0, 0.0)),  # 13: precedence, not left to right
        ("(3 + 5) * 2 = 16", (0.0, 0.0)),  # extra text
        ("7 * 2 + 5 - 3", (1.0, 1.0)),  # another way
        ("7 / (5 - 3 - 2)", (1.0, 0.0)),  # division by zero: a wrong answer, no error
        ("(7 + 5 + 3 + 2) / 2 * 2 - 1", (1.0, 0.0)),  # 1 not given
        ("(2 * 7 + 5 - 3) / 1", (1.0, 0.0)),
        ("2 ** 3 * 2", (0.0, 0.0)),  # no powers
        ("9**9**9", (0.0, 0.0)),  # huge: rejected before anything is computed
        ("-3 + 5 * 2 + 7 + 2", (0.0, 0.0)),  # no unary minus
        ("(3 + 5) // 2", (0.0, 0.0)),
        ("(3 + 5) × 2", (0.0, 0.0)),  # ASCII operators only
        ("(٣ + 5) * 2", (0.0, 0.0)),  # unicode digit
        ("(3 + 5) * 2.0", (0.0, 0.0)),
        ("__import__('os')", (0.0, 0.0)),
        ("(" * 60 + "3" + ")" * 60, (0.0, 0.0)),  # too long
        ("3 5", (0.0, 0.0)),
    ],
)
def test_countdown_answers(expression, rewards):
    assert _rewards(COUNTDOWN, f"3+5=8\n{answer(expression)}") == rewards


def test_exact_fractions_and_repeated_numbers():
    assert evaluate_countdown("7 / 2 * 2", (7, 2, 2)) == 7  # exact: 3.5 * 2, no rounding
    assert evaluate_countdown("(1 / 3) * 3", (1, 3, 3)) == 1
    assert evaluate_countdown("2 + 2", (2, 2)) == 4 and evaluate_countdown("2 + 2", (2, 3)) is None


def test_huge_inputs_are_refused_quickly():
    start = time.perf_counter()
    for text in ("9**9**9", "9" * 100_000, "(" * 100_000, "1" + "*1" * 50_000):
        assert evaluate_countdown(text, (9, 9, 9)) is None
        assert _rewards(COUNTDOWN, answer(text)) == (0.0, 0.0)
    assert time.perf_counter() - start < 1.0
