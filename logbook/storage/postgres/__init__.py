"""The team ledger on PostgreSQL (DESIGN §10): the same tables and rules as the SQLite file,
for many writers on many machines. Needs the optional extra ``logbook[postgres]`` (psycopg 3).
"""
