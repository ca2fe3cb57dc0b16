#!/usr/bin/env bash
# Install the ROS 2 tools PyPI lacks — `ros2` and its verbs, `ros2 launch`, launch_ros, rosidl_runtime_py — and
# build the interface packages the product talks to (composition_interfaces, vision_msgs, tf2_msgs, control_msgs
# and nav2_msgs' NavigateToPose action) from a directory of their upstream sources, e.g. ../shared/ros2-upstream
# (layout in its README.md). A machine with ROS 2 from apt has all of this already and needs none of it.
#
#   scripts/install_ros2_tools.sh [--optional] [SOURCE_DIR]
#
# The Python packages go into .venv with `pip install --no-deps --no-build-isolation` (from a temporary copy:
# the sources may be read-only); nothing is fetched from an index except the pinned PyPI packages they need
# (requirements/ros2-tools.txt). The interfaces are built with the workspace's own rosidl toolchain into the
# underlay .ros2-tools/install, which .env.sh sources before ros2_ws. The sources are never copied into the
# repository. Idempotent: a stamp over the sources, this script and the pins skips everything when nothing
# changed. --optional: when SOURCE_DIR does not exist, say so in one line and succeed (the test command uses it).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
UNDERLAY="$REPO/.ros2-tools"
STAMP="$VENV/.aiv-stamps/ros2-tools"

log() { printf '[ros2-tools] %s\n' "$*" >&2; }
die() { printf '[ros2-tools] error: %s\n' "$*" >&2; exit 1; }

OPTIONAL=0
if [ "${1:-}" = "--optional" ]; then OPTIONAL=1; shift; fi
SOURCE="${1:-${AIV_ROS2_UPSTREAM:-$REPO/../shared/ros2-upstream}}"

# Python distributions to install, as paths under SOURCE: the launch system, the `ros2` command and the verbs a
# ROS user types first, and the message (de)serialisation `ros2 topic|action|interface` need.
PYTHON_PACKAGES=(
    launch_repo/launch
    launch_repo/launch_xml
    launch_repo/launch_yaml
    launch_ros_repo/launch_ros
    launch_ros_repo/ros2launch
    rosidl_runtime_py_repo
    ros2cli_repo/ros2cli
    ros2cli_repo/ros2action
    ros2cli_repo/ros2interface
    ros2cli_repo/ros2lifecycle
    ros2cli_repo/ros2node
    ros2cli_repo/ros2param
    ros2cli_repo/ros2pkg
    ros2cli_repo/ros2run
    ros2cli_repo/ros2service
    ros2cli_repo/ros2topic
)
# Interface packages built as they are upstream. control_msgs (FollowJointTrajectory and PointHead: the robot's
# camera height levels) needs trajectory_msgs, which is a PyPI wheel pinned in requirements/base.txt.
INTERFACE_PACKAGES=(
    interfaces/composition_interfaces
    interfaces/vision_msgs
    interfaces/tf2_msgs
    interfaces/control_msgs
)
# Nav2's NavigateToPose.action, built unchanged (so its type hash is Nav2's) in a package of its own: upstream
# nav2_msgs needs nav2_common, geographic_msgs and rclcpp, none of which exist here.
NAV2_ACTION=interfaces/nav2_msgs_upstream/action/NavigateToPose.action

if [ ! -d "$SOURCE" ]; then
    if [ "$OPTIONAL" = 1 ]; then
        log "skipped: no upstream sources at $SOURCE (the launch, ros2 CLI, Nav2, vision_msgs and height-level tests will skip)"
        exit 0
    fi
    die "no upstream sources at $SOURCE (pass the directory, or set AIV_ROS2_UPSTREAM)"
fi
SOURCE="$(cd "$SOURCE" && pwd)"
for relative in "${PYTHON_PACKAGES[@]}" "${INTERFACE_PACKAGES[@]}" "$NAV2_ACTION"; do
    [ -e "$SOURCE/$relative" ] || die "$SOURCE/$relative is missing (see docs/ros2-from-pypi.md for the layout the script expects)"
done
[ -x "$VENV/bin/python" ] || die "no .venv yet: run 'make setup' first"
"$VENV/bin/python" -c 'import trajectory_msgs.msg' 2>/dev/null \
    || die "trajectory_msgs is not installed in $VENV (control_msgs needs it): run 'make setup' (requirements/base.txt pins it)"

source_key() {
    {
        cat "$REPO/scripts/install_ros2_tools.sh" "$REPO/requirements/ros2-tools.txt"
        cat "$VENV/.aiv-stamps/deps" 2>/dev/null || true
        (cd "$SOURCE" && find "${PYTHON_PACKAGES[@]}" "${INTERFACE_PACKAGES[@]}" "$NAV2_ACTION" -type f \
            ! -path '*/build/*' ! -path '*.egg-info/*' ! -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    } | sha256sum | cut -d' ' -f1
}

install_python_packages() {
    local scratch
    scratch="$(mktemp -d)"
    local targets=()
    for relative in "${PYTHON_PACKAGES[@]}"; do
        mkdir -p "$scratch/$(dirname "$relative")"
        cp -r "$SOURCE/$relative" "$scratch/$relative"
        rm -rf "$scratch/$relative/build" "$scratch/$relative"/*.egg-info
        targets+=("$scratch/$relative")
    done
    chmod -R u+w "$scratch"
    log "installing ${#PYTHON_PACKAGES[@]} Python packages from $SOURCE into $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$REPO/requirements/ros2-tools.txt" -c "$REPO/requirements/constraints.txt"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
        "${targets[@]}"
    rm -rf "$scratch"
}

write_nav2_package() {
    # A package of our own that generates only the upstream action file, copied in at build time.
    local package="$UNDERLAY/src/nav2_msgs"
    rm -rf "$package" && mkdir -p "$package/action"
    cp "$SOURCE/$NAV2_ACTION" "$package/action/"
    cp "$SOURCE/interfaces/nav2_msgs_upstream/LICENSE" "$package/"
    cat >"$package/package.xml" <<'EOF'
<?xml version="1.0"?>
<package format="3">
  <name>nav2_msgs</name>
  <version>0.0.0</version>
  <description>Nav2's NavigateToPose action only, built from its upstream definition (see scripts/install_ros2_tools.sh).</description>
  <maintainer email="aiv@example.invalid">AIV workspace</maintainer>
  <license>Apache-2.0</license>
  <buildtool_depend>ament_cmake</buildtool_depend>
  <buildtool_depend>rosidl_default_generators</buildtool_depend>
  <depend>builtin_interfaces</depend>
  <depend>geometry_msgs</depend>
  <depend>action_msgs</depend>
  <exec_depend>rosidl_default_runtime</exec_depend>
  <member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
EOF
    cat >"$package/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.8)
project(nav2_msgs)
find_package(ament_cmake REQUIRED)
find_package(builtin_interfaces REQUIRED)
find_package(geometry_msgs REQUIRED)
find_package(action_msgs REQUIRED)
find_package(rosidl_default_generators REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME} "action/NavigateToPose.action"
  DEPENDENCIES builtin_interfaces geometry_msgs action_msgs)
ament_export_dependencies(rosidl_default_runtime)
ament_package()
EOF
}

build_interfaces() {
    write_nav2_package
    # The message wheels' exported CMake files name the wheel builder's include paths; bootstrap rewrites them
    # after installing its pins, but a wheel installed since (trajectory_msgs, for control_msgs) needs it again.
    # Idempotent and quick.
    "$VENV/bin/python" "$REPO/scripts/fix_rosidl_cmake_paths.py" --prefix "$VENV" >&2
    local paths=()
    for relative in "${INTERFACE_PACKAGES[@]}"; do paths+=("$SOURCE/$relative"); done
    paths+=("$UNDERLAY/src/nav2_msgs")
    log "building ${#paths[@]} interface packages into $UNDERLAY/install (a few minutes on 2 cores)"
    (
        set +u  # the venv's and colcon's scripts read unset variables
        cd "$UNDERLAY"
        # shellcheck disable=SC1091
        source "$VENV/bin/activate"
        export AMENT_PREFIX_PATH="$VENV"
        export PYTHONNOUSERSITE=1
        colcon --log-base "$UNDERLAY/log" build --base-paths "${paths[@]}" \
            --build-base "$UNDERLAY/build" --install-base "$UNDERLAY/install" \
            --event-handlers console_cohesion- summary- status- \
            --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >&2
    ) || die "colcon build of the interfaces failed (see $UNDERLAY/log/latest_build)"
}

check_installation() {
    (
        set +u
        # shellcheck disable=SC1091
        source "$VENV/bin/activate"
        # shellcheck disable=SC1091
        source "$UNDERLAY/install/setup.bash"
        export AMENT_PREFIX_PATH="$AMENT_PREFIX_PATH:$VENV"
        python -c 'import launch_ros, ros2cli, rosidl_runtime_py, vision_msgs.msg, nav2_msgs.action, tf2_msgs.msg, composition_interfaces.srv
from control_msgs.action import FollowJointTrajectory, PointHead'
        ros2 --help >/dev/null
    ) || die "the installed tools do not import (see the messages above)"
}

main() {
    local start=$SECONDS key
    key="$(source_key)"
    if [ "${AIV_FORCE:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$key" ] \
        && [ -f "$UNDERLAY/install/setup.bash" ]; then
        return 0
    fi
    install_python_packages
    build_interfaces
    check_installation
    mkdir -p "$(dirname "$STAMP")" && printf '%s' "$key" >"$STAMP"
    log "ready in $((SECONDS - start)) s: source .env.sh, then ros2 --help"
}

main
