# The commands README.md names. Each sets the workspace up on first use (scripts/bootstrap.sh is
# idempotent and takes well under a second when nothing changed).
SHELL := /bin/bash
.SHELLFLAGS := -e -o pipefail -c
.DEFAULT_GOAL := help

PYTEST_WORKERS ?= 2
# Upstream sources of the ROS 2 tools PyPI lacks (ros2 CLI, ros2 launch, vision_msgs, nav2_msgs, ...).
ROS2_UPSTREAM ?= ../shared/ros2-upstream
PYTEST_ARGS ?=
ARGS ?=
RUN := source .env.sh &&

.PHONY: help setup ros2-tools demo bench test lint format build clean lock

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

setup:  ## create .venv, install pinned ROS 2 wheels + deps, build ros2_ws, write .env.sh
	@bash scripts/bootstrap.sh

ros2-tools: setup  ## install `ros2`, `ros2 launch` and vision_msgs / nav2_msgs / tf2_msgs / control_msgs from ROS2_UPSTREAM (not needed with apt ROS 2)
	@bash scripts/install_ros2_tools.sh $(ROS2_UPSTREAM)

demo: setup  ## the main job: offline evaluation over ROS, one verifier pair per core, metrics table + report (ARGS=... to the script)
	@$(RUN) python scripts/offline_eval.py $(ARGS)

bench: setup  ## ROS path vs in-process path, and 1 vs N verifier pairs, on the first 48 val pairs: time per step, episodes/s, peak memory
	@$(RUN) python -m aiv_synth.cli ensure-default --out data/pv_synthetic_default && \
	  python -m aiv_eval.cli bench ros2_ws/src/aiv_verifier/config/offline_eval.yaml \
	  --dataset data/pv_synthetic_default --set evaluator.slice_end=48 $(ARGS)

test: setup lint  ## lint, then every test (unit, ROS integration with real DDS, the ros2 tools when ROS2_UPSTREAM exists)
	@bash scripts/install_ros2_tools.sh --optional $(ROS2_UPSTREAM)
	@$(RUN) AIV_REQUIRE_ROS=1 AIV_REQUIRE_ROS2_TOOLS=$$([ -d "$(ROS2_UPSTREAM)" ] && echo 1 || echo 0) \
	  python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: setup  ## ruff check + format check + mypy (pyproject.toml [tool.mypy])
	@$(RUN) ruff check . && ruff format --check . && mypy

format: setup  ## apply ruff's fixes and formatting
	@$(RUN) ruff check --fix . && ruff format .

build: setup  ## force a colcon rebuild of the workspace
	@AIV_FORCE=1 bash scripts/bootstrap.sh

lock: setup  ## regenerate requirements/constraints.txt from the current venv
	@$(RUN) python scripts/lock_requirements.py

clean:  ## remove build products (keeps .venv and data)
	rm -rf ros2_ws/build ros2_ws/install ros2_ws/log .ros2-tools .env.sh .venv/.aiv-stamps/build .venv/.aiv-stamps/ros2-tools
