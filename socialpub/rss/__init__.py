"""RSS, Atom and RDF feeds whose items become posts."""
