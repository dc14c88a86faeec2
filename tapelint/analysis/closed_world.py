"""Closed-world evidence: can code tapelint has not read reach this object?

A rule that claims absence ("never applied", "never reset", "left unused") is right only when every place
the object can reach has been read. Objects that another module of the project can read (a module-level
name it imports, the attributes of a class it imports) are outside that world unless the project's other
modules were read and none imports them (`tapelint.project.imported_names`, asked lazily through
`Facts.imported_elsewhere`). Escapes within the file (library calls, `**kwargs`, `setattr`, stores into
other objects) are the value model's and each rule's questions.
"""

from __future__ import annotations

from tapelint.analysis.facts import Binding, Facts


def reachable_from_other_modules(facts: Facts, holder: Binding | None) -> bool:
    """Can code in another module of the project read what `holder` binds? A module-level name that another
    module imports (or the module itself, `import m`), and the attributes (`self.x`, class attributes) of a
    class that another module imports (to subclass it or to make one). True when that cannot be known."""
    if holder is None:
        return False
    scope = holder.scope
    if holder.class_body is not None:
        name = holder.class_body
    elif holder.target.startswith("self.") and scope.class_name is not None:
        name = scope.class_name.split(".")[0]
    elif scope.is_module:
        name = holder.target.split(".")[0]
    else:
        return False  # a function's local: no other module can read it
    imported = facts.imported_elsewhere()
    return imported is None or "*" in imported or name in imported


def where_checked(facts: Facts) -> str:
    """What a claim that an optimizer is never applied rests on, for its message."""
    if facts.importers is None:
        return "checked: all of this code; no other module can import it"
    return "checked: this module and the project's other modules; none imports it"
