"""The project messages as they were before the evidential fields (commit 493655e, before #29): the layout the
session bags recorded until then hold. Test data, verbatim from ros2_ws/src/aiv_interfaces/msg/."""

from __future__ import annotations

OLD_VERDICT = """\
# The answer to "is this the object the person described?"

# Values of `decision` and `first_view_decision`.
uint8 DECISION_NO=0
uint8 DECISION_YES=1
uint8 DECISION_UNDECIDED=2    # the agent could not decide (reference behaviour scores it as NO)
uint8 DECISION_FAILED=3       # infrastructure failure (move / frame timeout, backend error): no answer

std_msgs/Header header        # stamp = when the verdict was made
string request_id             # copied from the VerifyInstance goal
uint8 decision
float32 confidence            # in [0, 1]: share of decisive attribute votes that agree with the decision
uint32 steps                  # environment steps consumed (decision step, moves and failed moves all count)
uint32 effective_views        # steps minus unreachable and trap steps
uint32 nav_fail_unreachable   # moves that could not be executed (no sector there, or already visited)
uint32 nav_fail_trap          # moves that arrived at a view where the target is not visible
uint8 first_view_decision     # forced YES/NO after the first view only (for first-view accuracy)
uint8[] step_predictions      # forced YES/NO after each step, in order (prediction-flip statistics)
int8[] visited_sectors        # virtual sectors in the order they were observed
string stop_reason            # converged | unanimous | final (joined with "+"), early_exit, failure, rejected, canceled
string failure_reason         # why, when decision == DECISION_FAILED (bad goal, move or frame timeout, backend error)
AttributeState[] attributes   # final attribute table
string query_mode             # attribute | direct | merged
string category               # category the verifier assumed for the query
float64 elapsed_s             # wall time from goal acceptance to verdict
StageTiming[] timings         # per-stage breakdown (calls count backend invocations, e.g. model calls)
StepReport[] transcript       # every step of the request in order, move outcomes included
"""

OLD_STEP_REPORT = """\
# What the verifier saw and did in one step of a VerifyInstance request (sent as action feedback).

# Values of `action`.
uint8 ACTION_MOVE=0      # not yet decided; asked to move to `move_direction`
uint8 ACTION_DECIDE=1    # stopped and decided (see `belief`)

uint32 step                           # 0-based step index within the request
int8 sector                           # virtual sector (0..5) the view was taken from; -1 unknown
string capture_tag                    # simulator capture tag when known, else ""
builtin_interfaces/Time image_stamp   # stamp of the image this step judged
bool duplicate_view                   # true when the previous move failed and this image was already judged
float32 detection_confidence          # c used to weight this view's votes (1.0 box, 0.1 no box / trap)
uint8 action
string move_direction                 # relative direction requested when action == ACTION_MOVE
string move_reason                    # why the next-best-view strategy chose it
string stop_reason                    # why the agent stopped (converged / unanimous / final) or ""
AttributeState[] attributes           # per-attribute states after this view
uint8 belief                          # Verdict.DECISION_YES / DECISION_NO the agent would give now

# How the requested move went (filled once its result is known; "decided" for the answering step).
string move_outcome                   # moved | stayed | unreachable | already_visited | rejected | decided | ""
bool trap_view                        # the move arrived at a view where the target is not clearly visible
bool has_crop_box                     # false: no usable box, the full image was judged
Detection2D crop_box                  # padded, clamped box the crop was cut from (image pixels)
"""

OLD_ATTRIBUTE_STATE = """\
# The verifier's belief about one attribute of the queried object, accumulated over views.
#
# An attribute is one checkable claim taken from the query descriptions, e.g. name "body_color",
# type "color", evidence_phrase "blue". In "direct" / "merged" query modes the attribute is a whole
# description (names desc_1..desc_3 or merged_desc, type "other").

# Values of `state` and `reconciled_state`.
uint8 STATE_MISSING=0        # no decisive evidence yet (only Unsure answers, or nothing seen)
uint8 STATE_MATCHED=1        # evidence says the object has this attribute
uint8 STATE_CONTRADICTED=2   # evidence says the object does not have it (PInVerify: "Contradictory")

string name                  # attribute name, part-qualified where needed ("scarf_color")
string type                  # color | pattern | part | logo_text | material | relation | count | shape | other
string evidence_phrase       # the exact words of the query this attribute was taken from
uint8 weight                 # 1..3 importance from the decomposer (3 = most discriminative); 0 = unset

# Final decision from the raw vote sums (the accumulator the reported attr_majority fusion uses):
# no votes -> MISSING, votes_matched > votes_contradicted -> MATCHED, otherwise (ties too) -> CONTRADICTED.
uint8 state
# Confidence-reconciled state (paper Eq. 3: confidences below 0.3 are down-weighted by 0.2).
uint8 reconciled_state

float32 votes_matched        # sum of detection confidences of views that answered Yes
float32 votes_contradicted   # sum of detection confidences of views that answered No
float32 weight_matched       # reconciled (down-weighted) sums per state
float32 weight_contradicted
float32 weight_missing
bool converged               # true when the remaining steps cannot change `state`
float32 uncertainty          # for evidential trackers: uncommitted belief mass in [0, 1]; NaN when not used

string last_answer           # this view's answer: "Yes", "No", "Unsure" or "" when not asked
string last_reason           # the per-view verifier's short justification
"""

#: Type name -> old definition text.
OLD_DEFINITIONS = {
    "aiv_interfaces/msg/Verdict": OLD_VERDICT,
    "aiv_interfaces/msg/StepReport": OLD_STEP_REPORT,
    "aiv_interfaces/msg/AttributeState": OLD_ATTRIBUTE_STATE,
}
