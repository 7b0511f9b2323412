"""Loader and feature-store options, described once.

`LoaderOptions` and `FeatureStoreOptions` are the engine's own structs (graphtier/loader/loader.hpp,
graphtier/feature/feature_store.hpp), bound field by field with their defaults and docs
(python/src/options.cpp); budgets are `Budget`s (bytes, or a percent of the feature table), never
text that crosses to C++ to be parsed there. Every class here is built from the bound fields: the
keyword constructors, the routing of a call's keyword options (`route`), the option lists in the
loaders' docstrings (`describe`) and the command-line flags of `python -m graphtier.train`
(`add_arguments`). NeighborLoader, LayerLoader, graphtier.pyg.NeighborLoader, FeatureStore, the
distributed fetcher and `graphtier train` all take these objects, or their fields as keywords.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Dict, Iterable, Optional, Tuple

from graphtier import _core
from graphtier._core import Budget

__all__ = ["Budget", "FeatureStoreOptions", "LoaderOptions"]

# The options `python -m graphtier.train` has flags for (the rest are set from its other flags).
CLI_STORE_OPTIONS = ("gpu_hot", "gpu_cache", "cpu_buffer", "host_cache", "io_depth", "pinned_path")
CLI_LOADER_OPTIONS = ("window", "accumulate", "max_merge", "prefetch", "gpu_sampling", "bulk", "relation_fanouts")

# Old spellings, still accepted with a DeprecationWarning: README-era code passes them.
_DEPRECATED = {"cpu": "cpu_buffer", "num_threads": "sample_threads"}


def _assign(options, values: Dict[str, object]) -> None:
    for name, value in values.items():
        if name not in options.fields:
            raise TypeError(f"{type(options).__name__} has no option {name!r} (options: {', '.join(options.fields)})")
        setattr(options, name, value)


def _repr(options) -> str:
    fields = ", ".join(f"{name}={getattr(options, name)!r}" for name in options.fields)
    return f"{type(options).__name__}({fields})"


class LoaderOptions(_core.LoaderOptions):
    __doc__ = _core.LoaderOptions.__doc__

    def __init__(self, **options):
        super().__init__()
        _assign(self, options)

    def copy(self, **options) -> "LoaderOptions":
        """A copy with `options` changed."""
        out = _copy(LoaderOptions, _core.LoaderOptions, self, "options")
        _assign(out, options)
        return out

    __repr__ = _repr


class FeatureStoreOptions(_core.FeatureStoreOptions):
    __doc__ = _core.FeatureStoreOptions.__doc__

    def __init__(self, **options):
        super().__init__()
        _assign(self, options)

    def copy(self, **options) -> "FeatureStoreOptions":
        """A copy with `options` changed."""
        out = _copy(FeatureStoreOptions, _core.FeatureStoreOptions, self, "options")
        _assign(out, options)
        return out

    __repr__ = _repr


def _copy(cls, base, value, name: str):
    """A `cls` copy of `value` (an instance of `base`), or the defaults for None; another type is a
    TypeError naming the argument."""
    if value is None:
        return cls()
    if not isinstance(value, base):
        raise TypeError(f"{name}: expected a graphtier.{base.__name__}, got {type(value).__name__}")
    return cls(**{n: getattr(value, n) for n in value.fields})


def _renamed(kwargs: Dict[str, object]) -> Dict[str, object]:
    out = dict(kwargs)
    for old, new in _DEPRECATED.items():
        if old in out:
            if new in out:
                raise TypeError(f"{old}= and {new}= are the same option (give {new}= only)")
            warnings.warn(f"{old}= is deprecated: call it {new}=", DeprecationWarning, stacklevel=4)
            out[new] = out.pop(old)
    return out


def route(kwargs: Dict[str, object], loader: Optional[_core.LoaderOptions] = None,
          store: Optional[_core.FeatureStoreOptions] = None,
          fixed: Iterable[str] = ()) -> Tuple[LoaderOptions, FeatureStoreOptions, set]:
    """(loader options, store options, the store options named in `kwargs`): copies of `loader` and
    `store` (or the defaults) with each keyword option set on the class that has a field of its
    name (`seed` on both). An unknown name is a TypeError listing the options; so is one of `fixed`,
    the fields the caller sets itself (e.g. the output device, from a loader's `device=`)."""
    kwargs = _renamed(kwargs)
    lo = _copy(LoaderOptions, _core.LoaderOptions, loader, "options")
    so = _copy(FeatureStoreOptions, _core.FeatureStoreOptions, store, "store")
    store_named = set()
    for name, value in kwargs.items():
        if name in fixed:
            raise TypeError(f"{name} is set by the loader itself (from its device= or its class), not as an option")
        placed = False
        if name in lo.fields:
            setattr(lo, name, value)
            placed = True
        if name in so.fields:
            setattr(so, name, value)
            store_named.add(name)
            placed = True
        if not placed:
            raise TypeError(f"unknown option {name!r} (loader options: {', '.join(lo.fields)}; "
                            f"feature store options: {', '.join(so.fields)})")
    return lo, so, store_named


def store_options(kwargs: Dict[str, object], options: Optional[_core.FeatureStoreOptions] = None) -> FeatureStoreOptions:
    """FeatureStoreOptions from `options` (or the defaults) and keyword options (an unknown one is a
    TypeError)."""
    kwargs = _renamed(kwargs)
    out = _copy(FeatureStoreOptions, _core.FeatureStoreOptions, options, "options")
    _assign(out, kwargs)
    return out


def _doc(cls, name: str) -> str:
    return " ".join((getattr(cls, name).__doc__ or "").split())


def describe(cls, names: Optional[Iterable[str]] = None) -> str:
    """One line per option of `cls` (all, or `names`): name, default and doc; for docstrings."""
    default = cls()
    return "\n".join(f"    {name} = {getattr(default, name)!r}: {_doc(cls, name)}" for name in (names or cls.fields))


def parse_fanouts_by_name(text: str) -> Dict[str, list]:
    """`NAME=F,F;NAME=F,F` (e.g. "p:to:a=10,5;a:to:p=-1,0") as {NAME: [F, F]}: the command-line
    form of a dict of fanout lists (LoaderOptions.relation_fanouts); "" is {}. A malformed entry is
    an argparse.ArgumentTypeError naming it."""
    out: Dict[str, list] = {}
    for entry in (e.strip() for e in text.split(";")):
        if not entry:
            continue
        name, sep, values = entry.partition("=")
        try:
            fanouts = [int(v) for v in values.split(",")] if sep and name.strip() else None
        except ValueError:
            fanouts = None
        if fanouts is None:
            # argparse prints an ArgumentTypeError's message as it is (a ValueError as "invalid value").
            raise argparse.ArgumentTypeError(f"{entry!r} is not NAME=F,F,... (a relation name and its fanouts per block, "
                             f"e.g. p:to:a=10,5)")
        out[name.strip()] = fanouts
    return out


def add_arguments(parser: argparse.ArgumentParser, cls, names: Iterable[str], dest_prefix: str = "") -> None:
    """A flag `--name-with-dashes` per option of `cls` in `names`, its type, default and help from
    the bound field; booleans get `--x` and `--no-x`; budgets stay text until `from_arguments`;
    a dict of fanout lists is written `NAME=F,F;NAME=F,F` (parse_fanouts_by_name)."""
    default = cls()
    for name in names:
        value = getattr(default, name)
        flag = "--" + name.replace("_", "-")
        help_text = _doc(cls, name).replace("%", "%%")
        if isinstance(value, bool):
            parser.add_argument(flag, dest=dest_prefix + name, action=argparse.BooleanOptionalAction, default=value,
                                help=help_text)
        elif isinstance(value, dict):
            parser.add_argument(flag, dest=dest_prefix + name, type=parse_fanouts_by_name, default=value,
                                metavar="NAME=F,F;...", help=help_text)
        elif isinstance(value, Budget):
            # Kept as text (argparse's namespace goes into checkpoints); from_arguments makes the
            # Budget, whose ValueError names a bad one.
            parser.add_argument(flag, dest=dest_prefix + name, default=str(value), metavar="BUDGET", help=help_text)
        else:
            parser.add_argument(flag, dest=dest_prefix + name, type=type(value), default=value, help=help_text)


def from_arguments(args: argparse.Namespace, cls, names: Iterable[str], dest_prefix: str = "", **fixed):
    """The options `add_arguments` added, read back from `args`, with `fixed` fields set."""
    return cls(**{name: getattr(args, dest_prefix + name) for name in names}, **fixed)


def cli_store_options(args: argparse.Namespace) -> FeatureStoreOptions:
    """The feature store's options from `python -m graphtier.train`'s command line (its --seed
    seeds random eviction too), for the single-process store and the distributed fetcher alike."""
    return from_arguments(args, FeatureStoreOptions, CLI_STORE_OPTIONS, seed=args.seed)
