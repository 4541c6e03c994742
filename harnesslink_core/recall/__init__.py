"""Reading memory back (SPEC §6): the search index and what answers from it.

The index (`index` keeps it: schema, indexing, rebuilds; `query` asks it: every read, the
full-text search built as `(sql, params)`; `fingerprint` for copies of one answer; `vectors`,
`meaning` for meaning). The prompt's matches, one module per stage (`matches` runs them): the
prompt's words and terms (`terms`, `tokens`, `lexicon`: the vocabulary of related terms) ->
candidates and their features (`candidates`, every read) -> the decision (`decide`, pure) ->
the framed block (`matches.render`). Recall on request (`pull`), the session-start brief
(`brief`) and how memory is framed when injected (`framing`). Imports the foundations and `store`.
"""
