"""Reading memory back (SPEC §6): the search index and what answers from it.

The prompt's words (`tokens`, `terms`, `lexicon`: the vocabulary of related terms),
the index (`index`, `fingerprint` for copies of one answer), the prompt's matches
(`matches`), the session-start brief (`brief`) and how memory is framed when
injected (`framing`). Imports the foundations and `store`.
"""
