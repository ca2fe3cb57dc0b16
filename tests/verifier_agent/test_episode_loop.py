"""The one episode loop with a real agent (VerificationSession) against a real port (the in-process env).

Pins how an episode runs and how each way of ending without an answer is reported, on hand-written
episodes: the loop against the step-by-step rules of the reference, the budget, a move the environment
refuses, and an agent that fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiv_dataset.layout import PInVerifyDataset
from aiv_dataset.vocabulary import MoveOutcome
from aiv_eval.run.env_port import EnvPort, frame_from_observation, run_env_episode
from aiv_offline_sim.environment import Action, PInVerifyEnv
from aiv_verifier.agent.episode_loop import run_episode
from aiv_verifier.agent.factory import AgentFactory
from aiv_verifier.agent.trace import summarize
from aiv_verifier.agent.verification_session import VerificationSession
from aiv_verifier.core.types import Decision
from support.tiny_dataset import EpisodeSpec, TinyDataset, ring


def _env(root: Path, *, max_steps: int = 6) -> PInVerifyEnv:
    """Two episodes with traps and an unreachable sector, so moves fail and arrive at trap views."""
    data = TinyDataset(root)
    first = data.add_episode(EpisodeSpec(views=ring(traps={4}, unreachable={8})))
    second = data.add_episode(EpisodeSpec(episode="1", views=ring(unreachable={2, 6}, far_traps={10})))
    records = [data.pair(first), data.pair(second, query_object_id="cup_3", query_category="mug")]
    data.write_descriptions()
    index = data.write_index("pv_index_test.jsonl", records)
    dataset = PInVerifyDataset(root)
    return PInVerifyEnv(
        dataset.read_pair_index(index),
        dataset,
        max_steps=max_steps,
        privileged=True,
        descriptions=dataset.load_descriptions(),
    )


def _factory(**agent: object) -> AgentFactory:
    return AgentFactory.from_config({"agent": {"nbv": "random", **agent}})


def _session(factory: AgentFactory, port: EnvPort, key: str, max_steps: int = 6) -> VerificationSession:
    return factory.new_session(port.observation.query_descriptions, episode_key=key, max_steps=max_steps)


def _by_hand(env: PInVerifyEnv, index: int, factory: AgentFactory, key: str):
    """The episode as the reference drives it: observe, then step the env with the answer or the move."""
    observation = env.reset(index)
    session = factory.new_session(observation.query_descriptions, episode_key=key, max_steps=env.max_steps)
    played = []
    while True:
        step = session.observe(frame_from_observation(observation))
        action = (
            (Action.yes() if step.decision is Decision.YES else Action.no())
            if step.stopped
            else Action.move(step.move.direction)
        )
        observation, _, done, info = env.step(action)
        played.append((step.step, step.sector, step.capture_tag, info.outcome, info.trap_view))
        if done:
            return session, played


@pytest.mark.parametrize("fusion", ["attr_majority", "majority"])
def test_loop_plays_episodes_exactly_as_the_reference_rules(tmp_path, fusion) -> None:
    env = _env(tmp_path)
    factory = _factory(fusion=fusion)
    outcomes = set()
    for index in range(len(env.records)):
        _, trace, summary = run_env_episode(env, index, factory, episode_key=f"ep{index}")
        reference, played = _by_hand(env, index, factory, f"ep{index}")
        assert [
            (e.step.step, e.step.sector, e.step.capture_tag, e.move_result, e.trap_view)
            for e in trace.entries
        ] == played
        assert not trace.failed and summary.decision is reference.final_decision is not None
        assert summary.visited_sectors == reference.visited_order and summary.steps == len(played)
        assert summary.step_predictions == reference.step_predictions
        outcomes |= {entry.move_result for entry in trace.entries}
    if fusion == "majority":  # six views: the moves must have met failures and traps on the way
        assert {MoveOutcome.DECIDED, MoveOutcome.MOVED} <= outcomes and len(outcomes) >= 3


def test_every_step_is_reported_once_with_its_frame_and_outcome(tmp_path) -> None:
    env = _env(tmp_path)
    port = EnvPort.open(env, 0)
    session = _session(_factory(fusion="majority"), port, "ep0")
    seen = []
    trace = run_episode(
        session,
        port,
        episode_key="ep0",
        budget=6,
        start_sector=port.observation.current_sector,
        on_step=lambda frame, entry: seen.append((frame.step_count, entry)),
    )
    assert [entry for _, entry in seen] == trace.entries and trace.steps == 6
    assert [count for count, _ in seen] == list(range(6))
    assert trace.entries[-1].move_result is MoveOutcome.DECIDED


def test_a_budget_that_runs_out_before_the_agent_answers_is_a_failure(tmp_path) -> None:
    env = _env(tmp_path)
    port = EnvPort.open(env, 0)
    session = _session(_factory(fusion="majority"), port, "ep0")  # majority answers at its 6th view only
    trace = run_episode(session, port, episode_key="ep0", budget=2)
    assert trace.failure_reason == "the step budget of 2 ran out without a decision"
    assert trace.steps == 2 and not trace.cancelled
    summary = summarize(session, trace)
    assert summary.decision is None and summary.stop_reason == "failure" and summary.confidence == 0.0


def test_a_move_the_environment_refuses_ends_the_episode_with_its_words(tmp_path) -> None:
    env = _env(tmp_path, max_steps=2)  # the horizon comes before the agent's sixth view
    port = EnvPort.open(env, 1)
    session = _session(_factory(fusion="majority"), port, "ep1", max_steps=6)
    trace = run_episode(session, port, episode_key="ep1", budget=6)
    assert trace.failure_reason == (
        "step 1: the move server refused: step budget of 2 exhausted; the episode ended undecided"
    )
    assert [entry.move_result for entry in trace.entries][-1] is MoveOutcome.REJECTED and trace.steps == 2


def test_an_agent_that_fails_costs_the_episode_not_the_caller(tmp_path) -> None:
    env = _env(tmp_path)
    factory = _factory()
    session, trace, _ = run_env_episode(env, 0, factory, episode_key="ep0")
    assert not trace.failed
    again = run_episode(
        session, EnvPort.open(env, 0), episode_key="ep0", budget=6
    )  # the session has answered
    assert again.failure_reason.startswith("agent error at step 0: RuntimeError(")
    assert "already decided" in again.failure_reason and again.steps == 0
