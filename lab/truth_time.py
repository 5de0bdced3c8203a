"""UTC time helpers shared by truth.py and signals.py: epoch seconds or RFC 3339 in, RFC 3339
UTC with milliseconds (or epoch seconds) out."""

import datetime


def iso_from_epoch(s):
    t = datetime.datetime.fromtimestamp(float(s), datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def secs(ts):
    return datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
