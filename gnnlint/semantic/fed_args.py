"""Compiled models fed loader batches by the function of another file they are handed to.

``compiled_model = torch.compile(model)`` then ``train.Train_QM9(compiled_model,
loaders, ...)``, with the loop in ``training/train.py``: ``train_loader, val_loader
= loaders`` / ``for data in train_loader: trainer.train(data)`` runs the compiled
model on every batch of a variable-size loader. The compile site's file cannot
see that loop; the file with the loop knows, from its ``compiled_args`` facts,
which parameter holds the compiled object (handoffs.py), finds the loader
feeding it (feeds.py) and tells the files importing the function or class
(``ExportedFacts.fed_args``: ``"Train_QM9:0"`` -> ``"<Loader>: <how>"``; the
engine delivers them to the importers, keyed ``"train.Train_QM9:0"``). There
``fed_by_callee(call, ref)`` makes the call handing the compiled object over a
``LoaderFeed`` of the compile site (GNN006/GNN007 report where it is compiled).
Only files told about a compiled argument compute anything.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.config_targets import CONFIG_GROUP, is_group_ref
from gnnlint.facts import ImportRef
from gnnlint.semantic.containers import ELEMENTS

# a fed_args value whose loader's batches the loop hands on unread (LoaderFeed.unread)
_UNREAD = "?"

if TYPE_CHECKING:
    from gnnlint.semantic.feeds import LoaderFeed


class FedArgs:
    """Loader feeds across a hand-off to another file. Mixed into FileContext; reads the SemanticModel."""

    def export_fed_args(self) -> None:
        """This file's functions / classes another file hands a compiled object to,
        whose loops feed it a variable-size loader's batches: told to their importers."""
        if not self.project.compiled_args:
            return
        for key, why in self.project.compiled_args.items():
            name, _, spec = key.partition(":")
            elements = spec.endswith(ELEMENTS)  # `models=[model]`: a list of compiled objects (containers.py)
            spec = spec.removesuffix(ELEMENTS)
            info = self.functions.get(name)
            if info is not None:
                params = list(info.params)
                param = params[int(spec)] if spec.isdigit() and int(spec) < len(params) else \
                    (spec if spec in info.params else None)
                ref = ("name", param, info, -1, None)
                refs = [("elements", ref) if elements else ref] if param is not None else []
            elif "." not in name:
                refs = [("elements", ref) if elements and not done else ref
                        for ref, _what, done in self._handed_to_class(name, spec, why, elements)]
            else:
                continue
            feeds = [feed for feed in self._feeds_from_refs(refs) if not feed.padded] if refs else []
            if not feeds and refs:  # batches handed on unread: the compiling file judges by its model
                feeds = [feed for feed in self._feeds_from_refs(refs, unread_ok=True) if not feed.padded]
            if feeds:
                mark = _UNREAD if feeds[0].unread else ""
                self.exported.fed_args.append((ImportRef("", key), f"{mark}{feeds[0].loader}: {feeds[0].via}"))

    def fed_by_callee(self, call: cst.Call, ref: tuple, unread_ok: bool = False) -> Optional["LoaderFeed"]:
        """``train.Train_QM9(model, ...)`` handing the compiled ``ref`` to an imported
        function (or class, also one a Hydra config names: ``instantiate(cfg.trainer, models=[model])``)
        whose file feeds that parameter a loader's batches (``unread_ok``: also batches of a loader
        built elsewhere that file hands on without reading them as graphs)."""
        if not self.project.fed_args:
            return None
        from gnnlint.semantic.feeds import LoaderFeed

        target = self._imported_function(call)
        classes = self._imported_class(call) or self._instantiated_classes(call)
        for imported in ([target] if target is not None else []) + classes:
            stem = (imported.module or "").split(".")[-1]
            for spec in self._specs_passing(call, ref):
                # a config group's classes: told by the join (fact_joins.join_config_fed_args)
                why = self.project.fed_args.get(f"{CONFIG_GROUP}{imported.name}:{spec}" if is_group_ref(imported)
                                                else f"{stem}.{imported.name}:{spec}")
                if why is None or (why.startswith(_UNREAD) and not unread_ok):
                    continue
                unread = why.startswith(_UNREAD)
                loader, _, via = why[len(_UNREAD) if unread else 0:].partition(": ")
                via, _, source = via.rpartition(", from ")
                # a config group's class: the join names it (`trainer.py's `Trainer``)
                where = source if is_group_ref(imported) else f"{source}'s `{imported.name}`" if via \
                    else f"`{imported.name}`"
                return LoaderFeed(loader, call, f"{via or source}; the loop is in {where}, which it is handed to",
                                  False, (), False, unread=unread)
        return None
