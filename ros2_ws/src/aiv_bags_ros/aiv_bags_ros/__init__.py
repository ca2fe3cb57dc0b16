"""Verification sessions as rosbag2 files: the recorder node (``aiv-bag record``) and open-loop replay
(``aiv-bag replay``). See :mod:`.session_bag` for the topics and how the project's types are embedded."""
