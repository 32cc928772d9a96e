// Package schema holds Trawler's PostgreSQL migrations as numbered SQL files
// (NNNN_name.sql), embedded so every binary can apply them at start.
package schema

import "embed"

// Migrations is the directory of numbered migration files.
//
//go:embed *.sql
var Migrations embed.FS
