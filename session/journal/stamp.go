package journal

import "time"

// parseStamp reads an entry's timestamp as time.Parse(time.RFC3339Nano)
// does. The form pi and rally write (JavaScript's toISOString: UTC, to
// the millisecond) is read by hand, without time.Parse's layout walk and
// time.Date's normalizing, which was a thirtieth of a long session's
// load; anything else (an offset, no fraction, a value out of range) goes
// to time.Parse, so the result is always what it would give.
func parseStamp(s string) (time.Time, bool) {
	if t, ok := isoStamp(s); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// isoStamp reads "YYYY-MM-DDTHH:MM:SS.fffZ" with one to nine digits of
// fraction; ok is false for any other text, or a field out of range.
func isoStamp(s string) (time.Time, bool) {
	if len(s) < 22 || len(s) > 30 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	year, ok1 := digitsOf(s[0:4])
	month, ok2 := digitsOf(s[5:7])
	day, ok3 := digitsOf(s[8:10])
	hour, ok4 := digitsOf(s[11:13])
	minute, ok5 := digitsOf(s[14:16])
	sec, ok6 := digitsOf(s[17:19])
	frac := s[20 : len(s)-1]
	nsec, ok7 := digitsOf(frac)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	for range 9 - len(frac) {
		nsec *= 10
	}
	unix := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(unix, int64(nsec)).UTC(), true
}

// digitsOf reads s, one to nine ASCII digits, as a number.
func digitsOf(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int(c)
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the given date
// of the proleptic Gregorian calendar, year 0 to 9999: the year is
// counted from March, so that the leap day falls at its end.
func daysFromCivil(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	if year < 0 { // -1, for January and February of year 0: Go's division truncates
		era = -1
	}
	yoe := year - era*400
	mp := (month + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
