"""`RecallStore`: LangGraph's long-term memory (``BaseStore``) backed by a recall ``MemoryStore``.

What an agent puts here is what ``<recall>`` injects: each item is a keyed memory of the
user its namespace names (``UserMemory.put``), in that user's own collection, searched
with the store's encoder and hybrid ranking like every other memory. Memory logic stays in
:mod:`recall_core.memory`; this module only maps LangGraph's namespaces, keys, values and
filters onto it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from recall_core.memory import MemoryRecord, MemoryStore

#: Metadata the store keeps on each item's memory (values are flat strings, as Chroma wants).
_MARK, _NAMESPACE, _KEY, _VALUE, _CREATED, _UPDATED, _INDEXED = (
    "lg_store", "lg_namespace", "lg_key", "lg_value", "lg_created_at", "lg_updated_at", "lg_indexed",
)  # fmt: skip
#: Metadata of an item with a time to live: when it expires (epoch seconds) and its ttl (minutes).
_EXPIRES, _TTL = "lg_expires_at", "lg_ttl"
#: Value fields embedded by default when the item has them (else the whole value, as JSON).
DEFAULT_TEXT_FIELDS = ("text", "content", "memory", "data")


class RecallStore(BaseStore):
    """A LangGraph ``BaseStore`` over a :class:`recall_core.memory.MemoryStore`.

    Args:
        store: the memory store (embedded or server) the agent and the recall loop share.
        user_position: which element of every namespace is the user id: ``0`` for
            ``("ada", "memories")``, ``1`` for LangGraph's common ``("memories", "ada")`` or
            ``("users", "ada")``. That user's memory holds the item, so
            ``ChatRecall(store=..., user_id="ada")`` recalls it.
        user_id: instead of ``user_position``, one user for every namespace (a store handed
            to one user's agent).
        text_fields: value fields whose text is embedded and injected, in order (the first
            present string wins; default ``text``, ``content``, ``memory``, ``data``); a
            value with none of them is embedded as JSON. ``put(..., index=[...])`` picks the
            fields per item; ``index=False`` keeps the item out of ``search`` (it is still a
            memory of the user's).

    Exactly one of ``user_position`` and ``user_id`` is required: there is no default,
    because a wrong guess joins several people into one memory user (``("users", "alice")``
    and ``("users", "bob")`` read at position 0 are both user ``"users"``).

    ``search`` with a ``query`` is semantic (the store's encoder and ranking); ``filter``
    follows LangGraph's ``InMemoryStore``: a value's top-level field equals the filter's
    value (a dict filter matches nested fields), or an operator dict with ``$eq``, ``$ne``,
    ``$gt``, ``$gte``, ``$lt``, ``$lte`` (the last four compare numbers; an item whose field
    is missing or not a number does not match). Any other operator raises ``ValueError``.
    Keys are any string, ``""`` included.

    ``ttl`` (minutes, LangGraph's ``put(..., ttl=...)`` or ``ttl_config["default_ttl"]``)
    gives an item an expiry kept in its memory's metadata: an expired item is never returned
    (get, search, list_namespaces; nor recalled, as it is deleted), and expired items are
    deleted when the store is made and on every put of their user. Reading refreshes the
    expiry (``refresh_ttl``, default ``ttl_config["refresh_on_read"]``, True); a refresh
    rewrites the item's memory (its vector too), so read-heavy stores may prefer
    ``refresh_on_read=False``.
    """

    supports_ttl = True

    def __init__(
        self,
        store: MemoryStore,
        *,
        user_position: int | None = None,
        user_id: str | None = None,
        text_fields: Sequence[str] = DEFAULT_TEXT_FIELDS,
        ttl_config: TTLConfig | None = None,
    ) -> None:
        if not callable(getattr(store, "for_user", None)):
            raise TypeError(f"store must be a recall_core.memory.MemoryStore, got {type(store).__name__}")
        if (user_position is None) == (user_id is None):
            raise ValueError(
                "RecallStore needs to know whose memory a namespace is: pass user_position= (the index of "
                'the user id in every namespace: 0 for ("ada", "memories"), 1 for ("users", "ada")) or '
                "user_id= (one user for every namespace), not both"
                + (f"; got user_position={user_position!r}, user_id={user_id!r}" if user_id is not None else "")
            )
        if user_position is not None and (
            isinstance(user_position, bool) or not isinstance(user_position, int) or user_position < 0
        ):
            raise ValueError(f"user_position must be an int >= 0, got {user_position!r}")
        if user_id is not None and (not isinstance(user_id, str) or not user_id.strip()):
            raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
        self.store = store
        self.user_position = user_position
        self.user_id = user_id
        text_fields = text_fields if isinstance(text_fields, str) else tuple(text_fields)  # an iterator, once
        if isinstance(text_fields, str) or not all(isinstance(f, str) and f for f in text_fields):
            # a bare "text" was read as the fields t, e, x, t: every item embedded as its raw JSON
            raise ValueError(f"text_fields must be a sequence of field paths (non-empty strings), got {text_fields!r}")
        self.text_fields = tuple(text_fields)
        self.ttl_config = _check_ttl_config(ttl_config)
        # An item's read-and-refresh and its put or delete, one at a time (LangGraph runs parallel branches
        # in threads): until 2026-12-07 a get's refresh wrote back the value it had read over a put made
        # meanwhile, and raised KeyError for an item deleted meanwhile (a reviewer). Striped: bounded.
        self._item_locks = tuple(threading.Lock() for _ in range(64))
        self.sweep()

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (GetOp, PutOp, SearchOp, ListNamespacesOp)."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key, op.refresh_ttl))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the memory store does blocking I/O and encoding)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ------------------------------------------------------------------ operations
    def _get(self, namespace: tuple[str, ...], key: str, refresh: bool = False) -> Item | None:
        user = self._user(namespace)
        memory, memory_key = self.store.for_user(user), _memory_key(namespace, key)
        with self._item_lock(user, memory_key):
            record = _alive(memory.get_by_key(memory_key))
            if record is not None and refresh:
                record = _refresh(memory, record)
        return _item(record) if record is not None else None

    def _item_lock(self, user: str, key: str) -> threading.Lock:
        return self._item_locks[hash((user, key)) % len(self._item_locks)]

    def _put(self, op: PutOp) -> None:
        user = self._user(op.namespace)
        memory = self.store.for_user(user)
        key = _memory_key(op.namespace, op.key)
        if op.value is not None and not isinstance(op.value, Mapping):
            raise ValueError(f"value must be a dict, got {type(op.value).__name__}")
        with self._item_lock(user, key):
            if op.value is None:
                memory.delete_key(key)
                return
            self._put_value(op, memory, key)
        self._sweep_user(user)  # expired items leave on their user's writes

    def _put_value(self, op: PutOp, memory: Any, key: str) -> None:
        now = _now()
        previous = memory.get_by_key(key)
        created = previous.metadata.get(_CREATED, now) if previous is not None else now
        metadata = {
            _MARK: True, _NAMESPACE: _encode_namespace(op.namespace), _KEY: op.key.replace("\x00", "\\u0000"),
            _VALUE: json.dumps(op.value, ensure_ascii=False, default=str), _CREATED: created, _UPDATED: now,
            _INDEXED: op.index is not False,
        }  # fmt: skip
        metadata.update(_ttl_metadata(op.ttl))
        try:
            memory.put(key, self._text(op.value, op.index), metadata=metadata, session_id="langgraph-store")
        except ValueError as error:  # the memory's own terms (content, metadata) -> the item's
            raise ValueError(f"item {op.key!r} in {op.namespace!r} cannot be stored: {error}") from error

    def _search(self, op: SearchOp) -> list[SearchItem]:
        _check_filter(op.filter)
        users = self._users(op.namespace_prefix)
        want = op.offset + op.limit

        def wanted(item: SearchItem) -> bool:
            return item.namespace[: len(op.namespace_prefix)] == tuple(op.namespace_prefix) and _matches(item.value, op.filter)

        found: list[SearchItem] = []
        for user in users:
            memory = self.store.for_user(user)
            if not op.query:
                found.extend(item for item in (_item(record, search=True) for record in memory.list(where={_MARK: True})
                                               if _alive(record)) if wanted(item))  # fmt: skip
                continue
            # Ask for more than the page (namespace, filter and index=False are checked here), and
            # more again until the page is full or the memory has no more: until 2026-12-07 items
            # past the first pool were never found (a reviewer: [] where InMemoryStore found them).
            pool = max(4 * want + 16, 32)
            while True:
                candidates = memory.search(op.query, k=pool, where={_MARK: True})
                records = {r.id: r for r in memory.get_many([c.id for c in candidates])}
                page = [item for item in (_item(records[c.id], score=float(c.score), search=True) for c in candidates
                                          if _alive(records.get(c.id)) is not None
                                          and records[c.id].metadata.get(_INDEXED, True)) if wanted(item)]  # fmt: skip
                if len(page) >= want or len(candidates) < pool:
                    break
                pool *= 4
            found.extend(page)
        if op.query:
            found.sort(key=lambda item: item.score if item.score is not None else float("-inf"), reverse=True)
        if op.refresh_ttl:
            self._refresh_items(found[op.offset : want])
        return found[op.offset : want]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces: set[tuple[str, ...]] = set()
        for user in self.store.users():
            for record in self.store.for_user(user).list(where={_MARK: True}):
                if _alive(record) is None:
                    continue
                namespace = _decode_namespace(record.metadata[_NAMESPACE])
                if all(_condition_holds(namespace, condition) for condition in op.match_conditions or ()):
                    namespaces.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        ordered = sorted(namespaces)
        return ordered[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ time to live
    def sweep(self) -> int:
        """Delete every expired item of every user; return how many (done when the store is made;
        nothing on a store opened read-only, whose reads leave expired items out all the same)."""
        if getattr(self.store, "read_only", False):
            return 0
        return sum(self._sweep_user(user) for user in self.store.users())

    def _sweep_user(self, user: str) -> int:
        memory = self.store.for_user(user)
        expired = memory.list(where={"$and": [{_MARK: True}, {_EXPIRES: {"$lte": time.time()}}]})
        if not expired:
            return 0
        # under the items' locks (taken in one order), looked at again: a put made since is kept (until
        # 2026-12-07 the sweep deleted it: a reviewer); then one delete for them all
        locks = sorted({id(lock): lock for lock in (self._item_lock(user, r.key or "") for r in expired)}.items())
        for _, lock in locks:
            lock.acquire()
        try:
            still = [r.id for r in memory.get_many([r.id for r in expired]) if _alive(r) is None]
            return memory.delete(still) if still else 0
        finally:
            for _, lock in reversed(locks):
                lock.release()

    def _refresh_items(self, items: Sequence[SearchItem]) -> None:
        for item in items:
            user, key = self._user(item.namespace), _memory_key(item.namespace, item.key)
            memory = self.store.for_user(user)
            with self._item_lock(user, key):
                record = _alive(memory.get_by_key(key))
                if record is not None:
                    _refresh(memory, record)

    # ------------------------------------------------------------------ helpers
    def _user(self, namespace: tuple[str, ...]) -> str:
        if not namespace or any(not isinstance(part, str) or not part for part in namespace):
            raise InvalidNamespaceError(f"a namespace is a non-empty tuple of non-empty strings, got {namespace!r}")
        if self.user_position is not None and len(namespace) <= self.user_position:
            raise InvalidNamespaceError(
                f"namespace {namespace!r} has no user id at position {self.user_position} (user_position)"
            )
        if self.user_id is not None:
            return self.user_id
        return namespace[self.user_position]

    def _users(self, prefix: tuple[str, ...]) -> list[str]:
        """Whose memories a namespace prefix covers: one user, or every user when it stops before the user part."""
        if self.user_id is not None:
            return [self.user_id]
        if len(prefix) > self.user_position:
            return [prefix[self.user_position]]
        return self.store.users()

    def _text(self, value: Mapping[str, Any], index: Any) -> str:
        fields = self.text_fields if index in (None, False) else tuple(index)
        for field in fields:
            text = _field(value, field)
            if isinstance(text, str) and text.strip():
                return text
        return json.dumps(value, ensure_ascii=False, default=str)


def _check_ttl_config(config: TTLConfig | None) -> TTLConfig | None:
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ValueError(f"ttl_config must be a dict (LangGraph's TTLConfig), got {type(config).__name__}")
    default = config.get("default_ttl")
    if default is not None and (isinstance(default, bool) or not isinstance(default, (int, float))
                                or not 0 < default < float("inf")):  # fmt: skip
        raise ValueError(f"ttl_config['default_ttl'] must be a finite number of minutes > 0 or None, got {default!r}")
    return config


def _ttl_metadata(ttl: float | None) -> dict[str, float]:
    """The metadata of an item put with ``ttl`` minutes (none without)."""
    if ttl is None:
        return {}
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < float("inf"):
        raise ValueError(f"ttl must be minutes > 0 or None, got {ttl!r}")
    return {_TTL: float(ttl), _EXPIRES: time.time() + 60.0 * float(ttl)}


def _alive(record: MemoryRecord | None) -> MemoryRecord | None:
    """``record`` unless its item has expired."""
    if record is None:
        return None
    expires = record.metadata.get(_EXPIRES)
    return record if expires is None or float(expires) > time.time() else None


def _refresh(memory: Any, record: MemoryRecord) -> MemoryRecord | None:
    """Push an item's expiry ``ttl`` minutes from now (an item without ttl is left alone); ``None``
    when the item is gone (deleted by another process since it was read)."""
    ttl = record.metadata.get(_TTL)
    if ttl is None:
        return record
    metadata = {**record.metadata, **_ttl_metadata(float(ttl))}
    try:
        memory.update(record.id, record.text, metadata=metadata)
    except KeyError:
        return None
    return dataclasses.replace(record, metadata=metadata)


def _memory_key(namespace: tuple[str, ...], key: str) -> str:
    """The memory's key of an item: namespace and key as JSON (any key, ``""`` and NUL included)."""
    if not isinstance(key, str):
        raise ValueError(f"key must be a string, got {type(key).__name__} {key!r}")
    return json.dumps([*namespace, key], ensure_ascii=False)


def _encode_namespace(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False)


def _decode_namespace(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _key_of(record: MemoryRecord) -> str:
    """An item's key, from its memory key (exact: the metadata copy has NUL escaped)."""
    try:
        path = json.loads(record.key) if record.key else None
    except ValueError:
        path = None
    return path[-1] if isinstance(path, list) and path and isinstance(path[-1], str) else record.metadata[_KEY]


def _item(record: MemoryRecord, score: float | None = None, *, search: bool = False) -> Any:
    """The LangGraph item a keyed memory holds (a ``SearchItem`` for search results)."""
    meta = record.metadata
    fields = {
        "namespace": _decode_namespace(meta[_NAMESPACE]), "key": _key_of(record), "value": json.loads(meta[_VALUE]),
        "created_at": datetime.fromisoformat(meta[_CREATED]), "updated_at": datetime.fromisoformat(meta[_UPDATED]),
    }  # fmt: skip
    return SearchItem(**fields, score=score) if search else Item(**fields)


def _field(value: Mapping[str, Any], path: str) -> Any:
    """``value``'s field at a dotted ``path`` (``"a.b"``), or ``None``."""
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _number(value: Any) -> float | None:
    """``value`` as a number for ``$gt``/``$gte``/``$lt``/``$lte`` (as InMemoryStore's ``float()``), or ``None``."""
    if isinstance(value, (int, float, str)):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _compare(op: str, actual: Any, operand: Any) -> bool:
    if op == "$eq":
        return actual == operand
    if op == "$ne":
        return actual != operand
    number = _number(actual)
    if number is None:  # a missing field, or not a number: no match (InMemoryStore raises TypeError here)
        return False
    bound = float(operand)
    return {"$gt": number > bound, "$gte": number >= bound, "$lt": number < bound, "$lte": number <= bound}[op]


#: The filter operators LangGraph's InMemoryStore supports; any other raises there too.
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _check_filter(filter: Mapping[str, Any] | None, path: str = "") -> None:
    """Raise ``ValueError`` for a filter ``search`` cannot apply (an unknown operator, a bound not a number)."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise ValueError(f"filter must be a dict of value fields, got {type(filter).__name__}")
    for name, wanted in filter.items():
        where = f"{path}.{name}" if path else str(name)
        if not isinstance(wanted, Mapping):
            continue
        if not any(str(k).startswith("$") for k in wanted):
            _check_filter(wanted, where)
            continue
        for op, operand in wanted.items():
            if op not in OPERATORS:
                raise ValueError(
                    f"filter on {where!r}: operator {op!r} is not supported; RecallStore supports "
                    f"{', '.join(OPERATORS)} (as LangGraph's InMemoryStore)"
                )
            if op not in ("$eq", "$ne") and _number(operand) is None:
                raise ValueError(f"filter on {where!r}: {op} compares numbers, got {operand!r}")


def _value_matches(actual: Any, wanted: Any) -> bool:
    """InMemoryStore's ``_compare_values``: operators, nested dicts, lists element-wise, else equality."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_compare(op, actual, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(_value_matches(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(wanted)
            and all(_value_matches(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return actual == wanted


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Does ``value`` pass LangGraph's ``filter`` (checked by :func:`_check_filter` first)?"""
    return all(_value_matches(value.get(name), wanted) for name, wanted in (filter or {}).items())


def _condition_holds(namespace: tuple[str, ...], condition: Any) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want == "*" or want == got for want, got in zip(path, part, strict=True))
