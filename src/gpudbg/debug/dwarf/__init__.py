"""Source-level debug information for PTX: the `.loc` line table and the
DWARF (functions, scopes, variables, types, locations) that `-G` embeds as
data directives, assembled against the simulator's code addresses."""
from .api import DebugInfo, VisibleVariable
from .assemble import Assembled, DwarfAssemblyError, assemble, symbols_of
from .lines import LineEntry, LineTable
from .locations import register_name, register_number
from .model import (AddressSpace, CompileUnit, Encoding, Location, LocationKind, LocationRange, Member, Scope,
                    Subprogram, Type, TypeKind, Variable)
from .reader import DwarfReadError

__all__ = ["DebugInfo", "VisibleVariable", "Assembled", "DwarfAssemblyError", "assemble", "symbols_of",
           "LineEntry", "LineTable", "register_name", "register_number", "AddressSpace", "CompileUnit",
           "Encoding", "Location", "LocationKind", "LocationRange", "Member", "Scope", "Subprogram", "Type",
           "TypeKind", "Variable", "DwarfReadError"]
