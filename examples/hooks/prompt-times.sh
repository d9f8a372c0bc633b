#!/bin/sh
# A rally hook for agent_start and agent_settled: appends one line per
# prompt to the CSV file named by its argument: session id, start (Unix
# ms), duration (ms). A retried prompt starts its agent again; the first
# start counts. A hook gets its events in order, so the start is always
# written before the prompt's agent_settled reads it (without one, as in
# rally hooks test agent_settled, the duration is 0).
csv=$1
start="$csv.start-$RALLY_SESSION_ID"
case $RALLY_EVENT in
agent_start)
	[ -e "$start" ] || echo "$RALLY_EVENT_TIME" > "$start"
	;;
agent_settled)
	[ -e "$csv" ] || echo "session,started_ms,duration_ms" > "$csv"
	began=$(cat "$start" 2>/dev/null || echo "$RALLY_EVENT_TIME")
	rm -f "$start"
	echo "$RALLY_SESSION_ID,$began,$((RALLY_EVENT_TIME - began))" >> "$csv"
	;;
esac
