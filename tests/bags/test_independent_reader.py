"""A tour bag is a plain rosbag2 mcap file: the mcap library (not rosbags) reads and decodes it the same way,
the project's box messages included (their definitions travel in the file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiv_bags import export_episode, read_tour_bag

from .tour_tools import benchmark_like_dataset

mcap_reader = pytest.importorskip("mcap.reader")
mcap_ros2_decoder = pytest.importorskip("mcap_ros2.decoder")


@pytest.mark.parametrize("compression", [None, "png"])
def test_mcap_library_decodes_the_tour_bag(tmp_path: Path, compression: str | None) -> None:
    ds, episodes, _ = benchmark_like_dataset(tmp_path / "src")
    bag = tmp_path / "tour"
    export_episode(ds.root, episodes[1].episode_path, bag, compression=compression)
    ours = read_tour_bag(bag).tour
    (file,) = bag.glob("*.mcap")

    topics: dict[str, list[object]] = {}
    schemas: dict[str, str] = {}
    with file.open("rb") as stream:
        reader = mcap_reader.make_reader(stream, decoder_factories=[mcap_ros2_decoder.DecoderFactory()])
        for schema, channel, _, decoded in reader.iter_decoded_messages():
            schemas[channel.topic] = schema.name
            topics.setdefault(channel.topic, []).append(decoded)

    image_topic = "/camera/image_raw/compressed" if compression else "/camera/image_raw"
    assert schemas == {
        "/tf_static": "tf2_msgs/msg/TFMessage",
        "/tf": "tf2_msgs/msg/TFMessage",
        "/camera/camera_info": "sensor_msgs/msg/CameraInfo",
        image_topic: "sensor_msgs/msg/CompressedImage" if compression else "sensor_msgs/msg/Image",
        "/detections": "aiv_interfaces/msg/Detection2DArray",
    }
    assert len(topics["/detections"]) == len(ours.views)
    for view, boxes in zip(ours.views, topics["/detections"], strict=True):
        stamp = boxes.header.stamp  # type: ignore[attr-defined]
        assert stamp.sec * 10**9 + stamp.nanosec == view.stamp_ns
        decoded = [
            (d.x_min, d.y_min, d.x_max, d.y_max, d.score, d.label)
            for d in boxes.detections  # type: ignore[attr-defined]
        ]
        assert view.boxes is not None
        assert decoded == [(*box.xyxy, box.score, box.label) for box in view.boxes]
    images = topics[image_topic]
    assert len(images) == len(topics["/tf"]) == len(topics["/camera/camera_info"]) == len(ours.views)
    (static,) = topics["/tf_static"]
    (obj,) = static.transforms  # type: ignore[attr-defined]
    assert (obj.header.frame_id, obj.child_frame_id) == ("map", "object")
    t = obj.transform.translation
    assert np.allclose([t.x, t.y, t.z], ours.object_position)
    for view, image, tf in zip(ours.views, images, topics["/tf"], strict=True):
        stamp = image.header.stamp  # type: ignore[attr-defined]
        assert stamp.sec * 10**9 + stamp.nanosec == view.stamp_ns
        assert bytes(image.data) == view.image.data  # type: ignore[attr-defined]
        (pose,) = tf.transforms  # type: ignore[attr-defined]
        assert (pose.header.frame_id, pose.child_frame_id) == ("map", "camera_optical")
        r = pose.transform.rotation
        assert np.allclose([r.x, r.y, r.z, r.w], view.pose.rotation)
    info = topics["/camera/camera_info"][0]
    assert (info.width, info.height) == (ours.camera.width, ours.camera.height)  # type: ignore[attr-defined]
    assert np.isclose(info.k[0], ours.camera.fx)  # type: ignore[attr-defined]
