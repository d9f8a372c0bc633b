#!/bin/sh
# A rally hook for auto_retry_end: a desktop notification when a retry
# chain gave up. The event is one JSON line on stdin, keys in sorted order:
#   {"attempt":3,"finalError":"...","success":false,"type":"auto_retry_end"}
event=$(cat)
case $event in
*'"success":false'*) ;;
*) exit 0 ;; # the retry worked: nothing to say
esac
retries=$(printf '%s\n' "$event" | sed -n 's/.*"attempt":\([0-9]*\).*/\1/p')
error=$(printf '%s\n' "$event" | sed -n 's/.*"finalError":"\(.*\)","success".*/\1/p')
exec notify-send --urgency=critical "rally gave up retrying" "$error (retries: $retries)"
