"""Reading memory back (SPEC §6): the search index and what answers from it.

The prompt's words (`tokens`, `terms`, `lexicon`: the vocabulary of related terms),
the index (`index`, `fingerprint` for copies of one answer), the prompt's matches
(`matches`), the session-start brief (`brief`), how memory is framed when injected
(`framing`) and what a session was already given (`injected`). Imports the
foundations and `store`.
"""
