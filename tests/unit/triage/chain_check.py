"""The causal chain's checks shared by the triage corpus checkers
(check_triage_corpus.py, check_real_fixtures.py)."""


def chain_problems(report):
    """The causal chain (`--explain`, "chain" in JSON) the primary rests on:
    its primary event is the report's primary, every other event is linked
    to what explains it; without a primary event it says why."""
    chain = report.get("chain")
    if not isinstance(chain, dict):
        return ["no chain"]
    events, primary = chain["events"], chain["primary_event"]
    if primary is None:
        if events and not chain["no_primary_because"] and report["primary_failure"] not in ("subprocess-fail",):
            return ["chain has events but neither a primary event nor a reason"]
        return []
    out = []
    if events[primary]["class"] != report["primary_failure"]:
        out.append(f"chain's primary {events[primary]['class']} != {report['primary_failure']}")
    for i, event in enumerate(events):
        if i != primary and event["explained_by"] is None:
            out.append(f"chain event #{i + 1} ({event['kind']} {event['class']}) explained by nothing")
    return out
