"""The write path (SPEC §4, §5): the autobank pass reads new transcript bytes, settles
turns and banks each exactly once (`autobank`); `background` decides when a hook
starts a pass in the background. Imports every layer below but `sessions`.
"""
