"""Running an evaluation: what turns a params file and an index slice into records.

The ``evaluator`` node (:mod:`.evaluator_node`) and the in-process mode (:mod:`.in_process`) are the two
drivers; both hand their episodes to the one loop (:mod:`.evaluation_loop`), so resume, retries and record order
cannot differ between them. Around them: the evaluation spec read from the params YAML (:mod:`.spec`,
:mod:`.evaluator_parameters`), what identifies a run (:mod:`.identity`), the ROS launcher of the three node
processes (:mod:`.ros_mode`), the episode client over ROS (:mod:`.episode_client`), the in-process episode port
(:mod:`.env_port`), simulator + verifier pairs (:mod:`.pairs`), episodes in flight (:mod:`.in_flight`), the
progress bar and the small rules both modes share (category hint, crop thumbnails, preflight checks, run names).

Nothing is imported here: the in-process mode must not load the node's ROS modules by importing this package.
"""
