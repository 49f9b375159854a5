#!/bin/sh
# First start: make the cluster and the media database; every start: run PostgreSQL in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required on first start}"
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
  initdb --username=postgres --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 "$PGDATA"
  rm -f "$pw"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "create database media" | postgres --single -D "$PGDATA" postgres > /dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
