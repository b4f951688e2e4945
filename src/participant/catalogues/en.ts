/**
 * The participant's pages in English: the reference catalogue. Every other locale has exactly
 * these keys (the type says so, and src/participant/i18n.test.ts checks that each message parses
 * and names the same arguments). Messages are ICU MessageFormat.
 */
export const en = {
  'page.skipToContent': 'Skip to main content',
  'page.sentBy': 'This page is from {workspace}.',
  'page.privacy': 'This page sets no cookies and loads nothing from other sites.',
  'link.unknown.title': 'This link does not work',
  'link.unknown.body': 'The link may be incomplete, or it may have been replaced by a newer one. Check that you copied all of it, or use the link in the most recent email you received.',
  'link.expired.title': 'This link has expired',
  'link.expired.body': 'Links stay valid for a limited time. If you would still like to take part, reply to the email that brought you here.',
  'study.closed.title': 'This study has closed',
  'study.closed.body': '{study} is no longer looking for participants. Thank you for your interest.',
  'study.paused.title': 'This study is paused',
  'study.paused.body': '{study} is not taking answers at the moment. Please try again later.',
  'person.optedOut.title': 'You will not be contacted',
  'person.optedOut.body': 'You asked not to be contacted about studies, so there is nothing to answer here.',
  'form.expired.title': 'Your answers were not sent',
  'form.expired.body': 'The form could not be checked. Go back to the page, reload it and send it again.',
  'rateLimited.title': 'Too many requests',
  'rateLimited.body': 'Please wait {seconds, plural, one {# second} other {# seconds}} and try again.',
  'errors.summaryTitle': 'There is a problem',
  'errors.required': 'Answer this question.',
  'errors.tooLong': 'Write at most {max, number} characters.',
  'errors.notANumber': 'Enter a number, like 12.',
  'errors.notADate': 'Enter a real date.',
  'errors.chooseOne': 'Choose one of the options.',
  'errors.unknownChoice': 'Choose one of the options shown.',
  'errors.notWhole': 'Enter a whole number, like 12.',
  'errors.belowMinimum': 'Enter a number of {limit, number} or more.',
  'errors.aboveMaximum': 'Enter a number of {limit, number} or less.',
  'errors.notAnEmail': 'Enter an email address, like name@example.com.',
  'errors.notAPhone': 'Enter a phone number, using digits, spaces and + ( ) . -',
  'screener.title': '{study}: a few questions',
  'screener.intro': 'Your answers help the team see whether this study is a good fit for you. It takes about {minutes, plural, one {# minute} other {# minutes}}.',
  'screener.optional': '(optional)',
  'screener.submit': 'Send my answers',
  'screener.answered.title': 'You have already answered',
  'screener.answered.body': 'Your answers to the questions for {study} arrived on {date, date, long}. There is nothing more to do here.',
  'screener.none.title': 'There are no questions to answer',
  'screener.none.body': '{study} has no questions for you at the moment.',
  'screener.thanks.title': 'Thank you',
  'screener.thanks.body': 'Your answers for {study} have been sent. The team will be in touch if there is a place for you.',
  'screener.notSelected.body': 'Thank you for your answers. This study is not the right fit this time; we may contact you about other studies.',
  'screener.full.title': 'This study is full',
  'screener.full.body': 'Thank you for your answers. This study already has all the participants it needs; we may contact you about other studies.',
} as const;

export type MessageKey = keyof typeof en;
export type Catalogue = Record<MessageKey, string>;
