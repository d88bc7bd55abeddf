package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// AuthFailed reports whether err is the server refusing the user name or
// password (SQLSTATE 28P01 invalid_password, 28000
// invalid_authorization_specification).
func AuthFailed(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000")
}

// DatabaseMissing reports whether err says the database named in the URL
// does not exist (SQLSTATE 3D000 invalid_catalog_name).
func DatabaseMissing(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "3D000"
}
