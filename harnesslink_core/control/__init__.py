"""What the user takes back or keeps out: `forget` (tombstones, SPEC §10) and
`exclusion` (folders kept out of memory). Imports the foundations, `store` and
`recall` (forgetting by query uses the recall search).
"""
