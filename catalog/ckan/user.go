package ckan

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"time"
)

// Time formats t as CKAN does: naive ISO 8601 in UTC, with microseconds
// only when they are not zero.
func Time(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// User is what CKAN's public user dict tells of a user.
type User struct {
	ID, Name, Fullname, About, Email, State string
	Sysadmin                                bool
	Created                                 time.Time
	// LastActive is the last login (nil: unknown or never).
	LastActive *time.Time
}

// DisplayName is the full name, else the login name.
func (u User) DisplayName() string {
	if strings.TrimSpace(u.Fullname) != "" {
		return u.Fullname
	}
	return u.Name
}

// UserDict renders u as CKAN's public user dict: no e-mail address, only
// its MD5 hash; createdPackages is number_created_packages. What only the
// user and sysadmins see is added by the identity store.
func UserDict(u User, createdPackages int) map[string]any {
	var fullname any = u.Fullname
	if u.Fullname == "" {
		fullname = nil
	}
	var lastActive any
	if u.LastActive != nil {
		lastActive = Time(*u.LastActive)
	}
	sum := md5.Sum([]byte(strings.ToLower(strings.TrimSpace(u.Email))))
	return map[string]any{
		"id": u.ID, "name": u.Name, "fullname": fullname, "display_name": u.DisplayName(), "about": u.About,
		"created": Time(u.Created), "state": u.State, "sysadmin": u.Sysadmin, "image_url": "",
		"image_display_url": "", "email_hash": hex.EncodeToString(sum[:]), "last_active": lastActive,
		"activity_streams_email_notifications": false, "number_created_packages": createdPackages,
	}
}
