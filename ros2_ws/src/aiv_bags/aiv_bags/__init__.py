"""Object tours as rosbag2 files, without rclpy (rosbags reads and writes mcap and sqlite3 bags).

A tour is every view around one object: image, camera pose and the object's position. :func:`export_episode`
writes a PInVerify episode as a tour bag; :func:`import_tour` turns a tour bag (e.g. from a robot) into an
episode, computing sectors and view types from the poses relative to the object. The topic and frame
convention is in :mod:`.tour_bag`, the axis convention in :mod:`.geometry`, the sidecar in :mod:`.sidecar`.
"""

from .geometry import Transform
from .sidecar import QueryPair, Sidecar, ViewTruth, load_sidecar, parse_sidecar, save_sidecar
from .tour import CameraModel, Tour, TourBox, TourError, TourFrames, TourImage, TourTopics, TourView
from .tour_bag import BagSummary, ReadTour, read_tour_bag, write_tour_bag
from .tour_export import ExportResult, episode_tour, export_episode
from .tour_import import ImportOptions, ImportResult, SectorGrid, import_tour, place_views

__all__ = [
    "BagSummary",
    "CameraModel",
    "ExportResult",
    "ImportOptions",
    "ImportResult",
    "QueryPair",
    "ReadTour",
    "SectorGrid",
    "Sidecar",
    "Tour",
    "TourBox",
    "TourError",
    "TourFrames",
    "TourImage",
    "TourTopics",
    "TourView",
    "Transform",
    "ViewTruth",
    "episode_tour",
    "export_episode",
    "import_tour",
    "load_sidecar",
    "parse_sidecar",
    "place_views",
    "read_tour_bag",
    "save_sidecar",
    "write_tour_bag",
]
