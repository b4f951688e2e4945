import type { Translator } from './i18n.js';
import { Page } from './layout.js';

export interface WithdrawalPageProps {
  i18n: Translator;
  from: string;
  /** The study's public name: the only thing about the person's participation the page shows. */
  study: string;
  action: string;
  formToken: string;
}

/**
 * The withdrawal link's page: the study's public name, what withdrawing means, and one button.
 * Nothing else about the person is shown: whoever holds the link (a forwarded email) learns only
 * which study it is for.
 */
export function WithdrawalPage(props: WithdrawalPageProps) {
  const { i18n } = props;
  return (
    <Page i18n={i18n} title={i18n.t('withdraw.title')} from={props.from}>
      <p>{i18n.t('withdraw.body', { study: props.study })}</p>
      <form method="post" action={props.action}>
        <input type="hidden" name="formToken" value={props.formToken} />
        <button type="submit" class="primary">
          {i18n.t('withdraw.confirm')}
        </button>
      </form>
    </Page>
  );
}
