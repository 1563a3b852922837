"""Events, read through core/v1 or events.k8s.io/v1, as one kind."""


from kubectl_safety.model.cached import cached
from kubectl_safety.model.meta import ApiObject, parse_time
from kubectl_safety.record import record


# The bounds validation puts on an Event's text (``pkg/apis/core/validation/events.go``: bytes).
EVENT_TEXT_LIMIT, EVENT_NOTE_LIMIT = 128, 1024


def bounded(value, limit: int) -> str:
    """``value`` as text of at most ``limit`` UTF-8 bytes, cut at a character boundary."""
    text = value if isinstance(value, str) else ""
    if len(text) * 4 <= limit:
        return text
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


@record(slots=False)
class ObjectRef:
    """The object an Event is about (``regarding``) or names beside it (``related``)."""

    kind: str
    namespace: str
    name: str
    uid: str

    @classmethod
    def of(cls, raw):
        if not isinstance(raw, dict) or not raw:
            return None
        return cls(*(raw.get(k) or "" for k in ("kind", "namespace", "name", "uid")))


class Event(ApiObject):
    """An Event, read through core/v1 or events.k8s.io/v1, as events.k8s.io/v1 shows it
    (``pkg/apis/events/v1/conversion.go``: involvedObject -> regarding, message -> note,
    source -> deprecatedSource, firstTimestamp/lastTimestamp/count -> their deprecated fields;
    ``reportingComponent`` is core/v1's name of ``reportingController``). Text is bounded as
    validation bounds it (``EVENT_TEXT_LIMIT``, ``EVENT_NOTE_LIMIT``)."""

    kind = "Event"

    def _field(self, v1_name, core_name):
        value = self.raw.get(v1_name)
        return self.raw.get(core_name) if value is None else value

    @cached
    def regarding(self):
        """An ``ObjectRef`` (empty fields when the event names none)."""
        return ObjectRef.of(self._field("regarding", "involvedObject")) or ObjectRef("", "", "", "")

    @cached
    def related(self):
        return ObjectRef.of(self.raw.get("related"))

    @cached
    def reason(self) -> str:
        return bounded(self.raw.get("reason"), EVENT_TEXT_LIMIT)

    @cached
    def action(self) -> str:
        return bounded(self.raw.get("action"), EVENT_TEXT_LIMIT)

    @cached
    def note(self) -> str:
        return bounded(self._field("note", "message"), EVENT_NOTE_LIMIT)

    @property
    def type(self) -> str:
        return bounded(self.raw.get("type"), EVENT_TEXT_LIMIT)

    @cached
    def _source(self) -> dict:
        source = self._field("deprecatedSource", "source")
        return source if isinstance(source, dict) else {}

    @cached
    def reporting_controller(self) -> str:
        """reportingController, else the legacy ``source.component``."""
        value = self._field("reportingController", "reportingComponent") or self._source.get("component")
        return bounded(value, EVENT_TEXT_LIMIT)

    @cached
    def reporting_instance(self) -> str:
        """reportingInstance, else the legacy ``source.host``."""
        return bounded(self.raw.get("reportingInstance") or self._source.get("host"), EVENT_TEXT_LIMIT)

    @cached
    def _times(self) -> list:
        series = self.raw.get("series") or {}
        values = (self.raw.get("eventTime"), series.get("lastObservedTime"),
                  self._field("deprecatedLastTimestamp", "lastTimestamp"),
                  self._field("deprecatedFirstTimestamp", "firstTimestamp"), self.meta.get("creationTimestamp"))
        return [t for t in map(parse_time, values) if t is not None]

    @cached
    def time(self):
        """The latest of eventTime, series.lastObservedTime, lastTimestamp, firstTimestamp and
        creationTimestamp (None: the event has none)."""
        return max(self._times, default=None)

    @cached
    def first_time(self):
        """The earliest of the same times: when it first happened."""
        return min(self._times, default=None)

    @cached
    def count(self) -> int:
        """How many times it happened: series.count, else the legacy count (at least 1)."""
        value = (self.raw.get("series") or {}).get("count") or self._field("deprecatedCount", "count")
        return max(int(value or 1), 1)
